/**
 * adnet bid adapter for Prebid.js: bids from an adnet network (an open-source ad network for Web3 sites) for banner
 * ad units. Each bid is the banner adnet's own embed would show the slot; its markup draws it and reports the
 * impression to adnet once half of it was in view for one second, which is what adnet bills.
 *
 * Written to Prebid's adapter rules: no external code, network requests only from buildRequests, banner only, floors
 * through getFloor, and the consent strings passed on. docs: adnetBidAdapter.md.
 */
import { registerBidder } from '../src/adapters/bidderFactory.js';
import { config } from '../src/config.js';
import { BANNER } from '../src/mediaTypes.js';
import { getStorageManager } from '../src/storageManager.js';
import { isArray, isNumber, isPlainObject, isStr, logInfo } from '../src/utils.js';
import { hasPurpose1Consent } from '../src/utils/gdpr.js';

const BIDDER_CODE = 'adnet';
// The key adnet's embed keeps its viewer id under, so the adapter and the embed on one page count one viewer.
const VIEWER_KEY = 'adnet:fp';
const VIEWER_ID = /^fp_[0-9a-f]{32}$/;
const SITE_ID = /^site_[A-Za-z0-9_-]{1,43}$/;
const SIZE_LIMIT = 10;
const G_DOLLAR = 'G$';

export const storage = getStorageManager({ bidderCode: BIDDER_CODE });

// A viewer id of this page only, for viewers whose device adnet may not store one on.
let pageViewer = null;

function newViewerId() {
  const bytes = new Uint8Array(16);
  window.crypto.getRandomValues(bytes);
  return 'fp_' + Array.prototype.map.call(bytes, (b) => (b + 256).toString(16).slice(1)).join('');
}

function optedOut() {
  return navigator.globalPrivacyControl === true || navigator.doNotTrack === '1' || window.doNotTrack === '1';
}

/**
 * The viewer id sent for frequency caps: the one kept on the device when the viewer consents to storage (TCF
 * purpose 1, where GDPR applies) and the publisher allows adnet storage; otherwise one of this page only, never
 * stored.
 */
export function viewerId(gdprConsent) {
  if (!optedOut() && hasPurpose1Consent(gdprConsent) && storage.localStorageIsEnabled()) {
    let kept = storage.getDataFromLocalStorage(VIEWER_KEY);
    if (!VIEWER_ID.test(kept || '')) {
      kept = newViewerId();
      storage.setDataInLocalStorage(VIEWER_KEY, kept);
    }
    return kept;
  }
  if (!pageViewer) pageViewer = newViewerId();
  return pageViewer;
}

function endpointOf(params) {
  return String(params.endpoint).replace(/\/+$/, '') + '/api/bid';
}

function bannerSizes(bid) {
  const sizes = bid.mediaTypes?.banner?.sizes || bid.sizes || [];
  return (isArray(sizes[0]) ? sizes : [sizes])
    .filter((size) => isArray(size) && size.length === 2 && size.every((n) => Number.isInteger(n) && n > 0))
    .slice(0, SIZE_LIMIT)
    .map(([width, height]) => width + 'x' + height);
}

/** The slot's floor in the page's ad server currency (USD without a currency module), or none. */
function floorOf(bid, currency) {
  if (typeof bid.getFloor !== 'function') return {};
  try {
    const found = bid.getFloor({ currency, mediaType: BANNER, size: '*' });
    if (isPlainObject(found) && isNumber(found.floor) && found.floor > 0) {
      return { floor: found.floor, floorCurrency: found.currency || currency };
    }
  } catch (e) {
    logInfo('adnet: no floor', e);
  }
  return {};
}

function consentFields(bidderRequest) {
  const fields = {};
  const gdpr = bidderRequest.gdprConsent;
  if (gdpr) {
    if (typeof gdpr.gdprApplies === 'boolean') fields.gdpr = gdpr.gdprApplies ? 1 : 0;
    if (isStr(gdpr.consentString) && gdpr.consentString) fields.gdprConsent = gdpr.consentString;
  }
  const gpp = bidderRequest.gppConsent;
  if (gpp) {
    if (isStr(gpp.gppString) && gpp.gppString) fields.gpp = gpp.gppString;
    if (isArray(gpp.applicableSections) && gpp.applicableSections.length) {
      fields.gppSid = gpp.applicableSections.join(',');
    }
  }
  return fields;
}

export const spec = {
  code: BIDDER_CODE,
  supportedMediaTypes: [BANNER],

  /** A bid needs its adnet site id and the adnet network's address, and a banner size. */
  isBidRequestValid(bid) {
    const params = bid?.params || {};
    return SITE_ID.test(params.siteId || '') && isStr(params.endpoint) && /^https?:\/\/[^/]+/.test(params.endpoint) &&
      (params.placement === undefined || isStr(params.placement)) && bannerSizes(bid).length > 0;
  },

  /** One POST to each adnet network and site: its ad units with sizes and floors, the page, the viewer id, consent. */
  buildRequests(validBidRequests, bidderRequest) {
    const currency = config.getConfig('currency.adServerCurrency') || 'USD';
    const groups = {};
    validBidRequests.forEach((bid) => {
      const key = endpointOf(bid.params) + ' ' + bid.params.siteId;
      (groups[key] = groups[key] || { url: endpointOf(bid.params), siteId: bid.params.siteId, bids: [] }).bids.push({
        bidId: bid.bidId,
        adUnitCode: bid.adUnitCode,
        sizes: bannerSizes(bid),
        placement: bid.params.placement || '',
        ...floorOf(bid, bid.params.currency || currency)
      });
    });
    const page = bidderRequest?.refererInfo?.page;
    const shared = {
      ...(isStr(page) && /^https?:/.test(page) ? { pageUrl: page } : {}),
      viewer: viewerId(bidderRequest?.gdprConsent),
      ...consentFields(bidderRequest || {})
    };
    return Object.keys(groups).map((key) => ({
      method: 'POST',
      url: groups[key].url,
      // text/plain: a simple request, without a CORS preflight; adnet reads it as JSON.
      data: JSON.stringify({ siteId: groups[key].siteId, ...shared, bids: groups[key].bids }),
      options: { contentType: 'text/plain', withCredentials: false }
    }));
  },

  /** adnet's bids as Prebid's: each names the slot's bidId, its net price, size, markup and advertiser domains. */
  interpretResponse(serverResponse) {
    const bids = serverResponse?.body?.bids;
    if (!isArray(bids)) return [];
    return bids.filter((bid) => isPlainObject(bid) && isStr(bid.requestId) && isNumber(bid.cpm) && bid.cpm > 0 &&
      isStr(bid.ad)).map((bid) => ({
      requestId: bid.requestId,
      cpm: bid.cpm,
      currency: bid.currency || G_DOLLAR,
      width: bid.width,
      height: bid.height,
      ad: bid.ad,
      ttl: bid.ttl,
      creativeId: bid.creativeId,
      netRevenue: bid.netRevenue !== false,
      mediaType: BANNER,
      meta: { advertiserDomains: isArray(bid.meta?.advertiserDomains) ? bid.meta.advertiserDomains : [] }
    }));
  },

  /** adnet has no user syncs: it keeps no third-party cookie. */
  getUserSyncs() {
    return [];
  },

  /**
   * Nothing to send: adnet bills the impression its markup reports once the rendered banner was half in view for one
   * second (with the serve's token, once), not the win, which is no impression yet.
   */
  onBidWon(bid) {
    logInfo('adnet: bid won', bid.requestId, bid.cpm, bid.currency);
  }
};

registerBidder(spec);
