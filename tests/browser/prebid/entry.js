// The Prebid.js bundle of tests/browser/test_prebid.py: Prebid's core, its consent modules, adnet's bid adapter
// (as it would sit in Prebid's modules/) and the stub bidder. The adapter's spec is also left on the page, for the
// tests of its functions one by one.
import pbjs from 'prebid.js';
import 'prebid.js/modules/consentManagementTcf';
import 'prebid.js/modules/consentManagementGpp';
import { spec } from '../../../integrations/prebid/adnetBidAdapter.js';
import './stubBidAdapter.js';

window.__adnetSpec = spec;
pbjs.processQueue();
