// The Prebid.js bundle of tests/browser/test_prebid.py: Prebid's core, its consent modules, adnet's bid adapter
// (as it would sit in Prebid's modules/) and the stub bidder.
import pbjs from 'prebid.js';
import 'prebid.js/modules/consentManagementTcf';
import 'prebid.js/modules/consentManagementGpp';
import '../../../integrations/prebid/adnetBidAdapter.js';
import './stubBidAdapter.js';

pbjs.processQueue();
