// A stand-in for another header bidder on the page: it asks the publisher's own server (params.url, same origin)
// for its price and bids that with a plain creative. The adnet bid must beat it when adnet offers more.
import { registerBidder } from '../src/adapters/bidderFactory.js';
import { BANNER } from '../src/mediaTypes.js';

registerBidder({
  code: 'stub',
  supportedMediaTypes: [BANNER],
  isBidRequestValid: (bid) => typeof bid.params?.url === 'string',
  buildRequests: (bids) => bids.map((bid) => ({ method: 'GET', url: bid.params.url, data: '', bidId: bid.bidId,
    size: bid.mediaTypes.banner.sizes[0] })),
  interpretResponse: (response, request) => [{
    requestId: request.bidId, cpm: response.body.cpm, currency: response.body.currency, width: request.size[0],
    height: request.size[1], ad: '<p id="stub-creative">stub</p>', ttl: 300, creativeId: 'stub-1', netRevenue: true,
    mediaType: BANNER, meta: { advertiserDomains: ['stub.example'] }
  }]
});
