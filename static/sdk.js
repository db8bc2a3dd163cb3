/*! adnet embed SDK 1.8.0 | MIT | docs/sdk.md */
// One script tag on a publisher's page: serves each [data-adnet-slot] lazily, renders banners with a
// "Sponsored" label and attached tasks, reports MRC-viewable impressions and clicks, runs polls, feedback
// and surveys, and shows the viewer's rewards in each [data-adnet-rewards] ("My rewards"). Plain ES2017, no
// dependencies, styles isolated in a shadow root, cards in the page's font and colours (or themed: data-theme,
// --adnet-* custom properties). It never writes to the console:
// a slot the server cannot fill stays empty and quiet.
(function (window, document) {
  "use strict";
  var VERSION = "1.8.0";
  var existing = window.adnet;
  if (existing && existing.version) return;

  var script = document.currentScript || document.querySelector("script[data-site-id][src*='sdk']");
  var data = (script && script.dataset) || {};
  var siteId = data.siteId || "";
  var base = (data.api || (script && script.src ? new URL(script.src, location.href).origin : "")).replace(/\/$/, "");
  var WALLET = /^0x[0-9a-fA-F]{40}$/;
  var TX_HASH = /^0x[0-9a-fA-F]{64}$/;
  var VIEWABLE_RATIO = 0.5;
  var VIEWABLE_MS = 1000;
  // How long a clicked banner's new tab waits for the click to be recorded (and its landing address, with the
  // click id for conversions) before it opens the target as served.
  var CLICK_WAIT_MS = 2000;
  // What a slot with data-tasks reserves for each of its two task rows (a title and a line of buttons) while it loads.
  var TASK_ROW_PX = 96;
  // Selector of claim(address,address,uint256,bytes32,uint256,uint256,bytes) on the vault.
  var CLAIM_SELECTOR = "03b5de49";
  var state = { wallet: null, listeners: {}, slots: [] };
  var memory = {};

  // Cards take the page's font and text colour; --adnet-* custom properties (docs/sdk.md, "Theming") and
  // data-theme="light|dark|auto" on the slot set colours instead. --t-* are a theme's values, --f/--b/--a/--l/--m
  // the colours in use: a var() left without a value makes its property inherit, so by default nothing is set.
  var LIGHT = "--t-f:#1c2128;--t-b:#fff;--t-a:#1f5fbf;--t-l:#c9d1d9;--t-m:#57606a}";
  var DARK = "--t-f:#e6edf3;--t-b:#161b22;--t-a:#79b0ff;--t-l:#454c56;--t-m:#a3adb9}";
  var TINT = "background:color-mix(in srgb,var(--a) 14%,transparent);border-color:var(--a)}";
  var CSS = [
    ":host{display:block;max-width:100%;box-sizing:border-box;contain:layout;",
    "--f:var(--adnet-fg,var(--t-f));--b:var(--adnet-bg,var(--t-b,transparent));",
    "--a:var(--adnet-accent,var(--t-a,currentColor));",
    "--l:var(--adnet-border,var(--t-l,color-mix(in srgb,currentColor 25%,transparent)));",
    "--m:var(--t-m,color-mix(in srgb,currentColor 75%,transparent));--r:var(--adnet-radius,8px);",
    "--s:max(0px,calc(var(--r) - 2px))}",
    ":host([data-theme=light]),:host([data-theme=auto]){" + LIGHT,
    ":host([data-theme=dark]){" + DARK,
    "@media (prefers-color-scheme:dark){:host([data-theme=auto]){" + DARK + "}",
    "*{box-sizing:border-box}",
    "[hidden]{display:none!important}",
    // Set on the cards, not the host, which the page's own rules (div{line-height:3}) would override.
    ":host>*{font-family:var(--adnet-font,inherit);font-size:var(--adnet-font-size,clamp(13px,.9375em,17px));",
    "font-style:normal;line-height:1.45;letter-spacing:normal;word-spacing:normal;text-align:start;text-indent:0;",
    "text-transform:none;white-space:normal;text-shadow:none}",
    ".card,.foot{color:var(--f);background:var(--b);border:1px solid var(--l)}",
    ".card{position:relative;border-radius:var(--r);padding:.85em 1em}",
    ".box{position:relative;overflow:hidden;max-width:100%;border-radius:var(--r);",
    "background:color-mix(in srgb,currentColor 6%,transparent)}",
    ".box.top{border-radius:var(--r) var(--r) 0 0}",
    ".ad,.media{display:block;width:100%;height:100%}",
    ".media{object-fit:contain;border:0}",
    ".ad:focus-visible{outline-offset:-3px}",
    ".tag{display:inline-block;font-size:.75em;font-weight:600;line-height:1.5;padding:0 .55em;border-radius:99px}",
    ".card .tag{border:1px solid var(--l);color:var(--m)}",
    ".box .tag{position:absolute;top:6px;left:6px;background:rgba(255,255,255,.92);color:#1c2128;",
    "pointer-events:none}",
    ".box .why{position:absolute;top:6px;right:6px;font-size:.75em;line-height:1.5;padding:0 .55em;border-radius:99px;" +
    "background:rgba(255,255,255,.92);color:#1c2128}",
    ".head,.row{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:.25em .75em}",
    ".head{margin-bottom:.45em}",
    ".ctl{display:flex;flex-wrap:wrap;align-items:center;gap:.5em}",
    ".ctl .choices{flex:1 1 100%}",
    ".task>button{align-self:flex-start}",
    ".heading{font-size:1.1em;line-height:1.3;font-weight:650;margin:0 0 .6em}",
    ".tasks{list-style:none;margin:0;padding:0}",
    ".foot{padding:0 1em;border-top:0;border-radius:0 0 var(--r) var(--r)}",
    ".task{display:flex;flex-direction:column;gap:.45em;padding:.7em 0;border-top:1px solid var(--l)}",
    ".task:first-child{border-top:0}",
    ".t{font-weight:600}",
    ".reward,.step,.msg{font-size:.875em;color:var(--m)}",
    ".done{color:color-mix(in srgb,#1a7f37 70%,currentColor);font-weight:600;margin:0}",
    ".msg.err{color:color-mix(in srgb,#d1242f 70%,currentColor)}",
    "p{margin:0 0 .4em}",
    "button,input,textarea{font:inherit;color:inherit;letter-spacing:inherit}",
    "button,.btn{display:inline-flex;align-items:center;justify-content:center;min-height:2.3em;margin:0;",
    "padding:.3em .9em;border:1px solid var(--l);border-radius:var(--s);background:none;color:inherit;",
    "font-weight:500;line-height:1.2;text-decoration:none;cursor:pointer}",
    "button:hover,.btn:hover{border-color:var(--a)}",
    ".primary{border-color:var(--a);color:var(--a);font-weight:600}",
    "[aria-pressed=true],.opt:has(:checked){" + TINT,
    "button:disabled,[aria-busy] button{opacity:.55;cursor:default}",
    ":focus-visible{outline:2px solid var(--a);outline-offset:2px}",
    "input[type=text],textarea{border:1px solid var(--l);border-radius:var(--s);padding:.4em .6em;background:none;",
    "max-width:100%}",
    "textarea{display:block;width:100%;min-height:4.5em}",
    "label{display:block;margin:.5em 0 .25em}",
    "input[type=radio],input[type=checkbox]{accent-color:var(--a);margin:0}",
    ".choices{border:0;margin:0;padding:0;min-width:0}",
    ".choices legend{padding:0;margin:0 0 .45em}",
    ".opts,.choices{display:grid;gap:.5em}",
    ".opts{grid-template-columns:repeat(auto-fit,minmax(min(100%,5.5em),1fr))}",
    ".poll .opts{grid-template-columns:repeat(auto-fit,minmax(min(100%,12em),1fr))}",
    ".scale{grid-template-columns:repeat(auto-fit,minmax(3.2em,1fr))}",
    ".opt{display:flex;align-items:center;gap:.6em;margin:0;padding:.45em .75em;border:1px solid var(--l);",
    "border-radius:var(--s);cursor:pointer}",
    ".stars{display:flex;gap:.2em;margin-bottom:.4em}",
    ".stars button{border:0;min-height:0;padding:0 .15em;font-size:1.5em;line-height:1.1;color:var(--m)}",
    ".stars .on{color:var(--a)}",
    "form>button{margin-top:.6em}",
    ".nav{display:flex;justify-content:space-between;gap:.5em;margin-top:.75em}",
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}",
    "@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}"
  ].join("");
  var sheet = null;

  // ---- small helpers -------------------------------------------------------------------------------------------
  function noop() {}
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }
  function httpUrl(value) {
    try {
      var url = new URL(value, location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) { return null; }
  }
  // The device's storage only once the page's consent signals allow it (below); the page's memory otherwise.
  function storage(key, value) {
    key = "adnet:" + key;
    try {
      if (!deviceAllowed()) throw new Error("consent");
      if (value === undefined) return window.localStorage.getItem(key);
      if (value === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
    } catch (e) {
      if (value === undefined) return memory[key] === undefined ? null : memory[key];
      if (value === null) delete memory[key];
      else memory[key] = value;
    }
    return null;
  }
  // Do-Not-Track or Global Privacy Control: the viewer id lives only as long as the page, never in storage.
  function optedOut() {
    return navigator.globalPrivacyControl === true || navigator.doNotTrack === "1" || window.doNotTrack === "1";
  }
  function fingerprint() {
    if (optedOut() || !deviceAllowed()) {
      if (optedOut()) storage("fp", null);
      return pageViewer();
    }
    var value = storage("fp");
    if (!value) {
      value = newViewerId();
      storage("fp", value);
    }
    return value;
  }
  // A viewer id that lives only as long as the page.
  function pageViewer() {
    if (!memory.pageViewer) memory.pageViewer = newViewerId();
    return memory.pageViewer;
  }
  // ---- consent: IAB TCF v2.2 (__tcfapi) and GPP (__gpp), in this window or through an ancestor's locator frame ----
  // The platform has CONSENT_WAIT_MS to answer. A TCF platform that does not means GDPR applies without consent;
  // a GPP one, no GPP signal. adnet decides from the strings (GET /api/consent, the rule serve and track apply).
  var CONSENT_WAIT_MS = 500;
  var consent = null;  // once known: {params: {gdpr, gdprConsent, gpp, gppSid}, limited}
  var consentAsked = null;
  var calls = {};
  function deviceAllowed() { return !!consent && !consent.limited; }
  function locator(name) {
    for (var frame = window; frame; frame = frame === window.top ? null : frame.parent) {
      try { if (frame.frames[name]) return frame; } catch (e) { /* another origin's frame: look further up */ }
    }
    return null;
  }
  function listen(key, command, callback) {
    var id = "adnet" + Math.random(), frame = locator(key + "Locator"), call = {};
    if (!frame) return false;
    if (!calls.on) {
      calls.on = 1;
      window.addEventListener("message", function (event) {
        var message = event.data;
        try { if (typeof message === "string") message = JSON.parse(message); } catch (e) { return; }
        var back = message && (message.__tcfapiReturn || message.__gppReturn);
        if (back && calls[back.callId]) calls[back.callId](back.returnValue, back.success);
      });
    }
    calls[id] = callback;
    call[key + "Call"] = { command: command, version: key === "__gpp" ? "1.1" : 2, callId: id };
    frame.postMessage(call, "*");
    return true;
  }
  function cmp(key, ready, timedOut) {
    return new Promise(function (resolve) {
      function take(answer, ok) { var found = ok !== false && answer && ready(answer); if (found) resolve(found); }
      try {
        if (typeof window[key] === "function") {
          if (key === "__gpp") window.__gpp("addEventListener", take); else window.__tcfapi("addEventListener", 2, take);
        } else if (!listen(key, "addEventListener", take)) return resolve({});
      } catch (e) { return resolve({}); }
      setTimeout(function () { resolve(timedOut); }, CONSENT_WAIT_MS);
    });
  }
  function consentSignals() {
    consentAsked = consentAsked || Promise.all([
      cmp("__tcfapi", function (tc) {
        if (tc.gdprApplies === false) return { gdpr: 0 };
        if (/^(tcloaded|useractioncomplete)$/.test(tc.eventStatus)) return { gdpr: 1, gdprConsent: tc.tcString };
      }, { gdpr: 1 }),
      cmp("__gpp", function (event) {
        var ping = event.pingData || event;
        if (ping.signalStatus === "ready") return { gpp: ping.gppString, gppSid: (ping.applicableSections || []).join(",") };
      }, {})
    ]).then(function (found) {
      var params = Object.assign({}, found[0], found[1]);
      if (params.gdpr !== 1 && !params.gpp) return { params: params, limited: false };
      return api("GET", "/api/consent?" + query(params)).then(function (response) {
        return { params: params, limited: response.body.limited !== false };
      });
    }).then(function (known) {
      consent = known;
      if (known.limited) try { window.localStorage.removeItem("adnet:fp"); } catch (e) { /* no storage */ }
      return known;
    });
    return consentAsked;
  }
  function newViewerId() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return "fp_" + Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }
  function query(params) {
    return Object.keys(params).filter(function (key) { return params[key] !== null && params[key] !== undefined && params[key] !== ""; })
      .map(function (key) { return encodeURIComponent(key) + "=" + encodeURIComponent(params[key]); }).join("&");
  }
  // Resolves {ok, status, body}; never rejects (status 0: the server could not be reached). `token`: a rewards
  // session's, sent as a bearer token (never a cookie: credentials stay omitted).
  function api(method, path, body, token) {
    var init = { method: method, mode: "cors", credentials: "omit", cache: "no-store", headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (token) init.headers.Authorization = "Bearer " + token;
    return window.fetch(/^https?:/.test(path) ? path : base + path, init).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (json) {
        return { ok: response.ok, status: response.status, body: json || {} };
      });
    }, function () { return { ok: false, status: 0, body: {} }; });
  }
  // Events outlive the page: a beacon where the browser has one (its JSON sent as text/plain needs no preflight,
  // and its answer is never read), otherwise a keepalive fetch.
  function beacon(path, body) {
    var json = JSON.stringify(body);
    if (navigator.sendBeacon) {
      try {
        if (navigator.sendBeacon(base + path, new Blob([json], { type: "text/plain;charset=UTF-8" }))) return;
      } catch (e) { /* fall back to fetch */ }
    }
    window.fetch(base + path, {
      method: "POST", mode: "cors", credentials: "omit", keepalive: true,
      headers: { "Content-Type": "application/json" }, body: json
    }).catch(noop);
  }
  function emit(name, detail, node) {
    (state.listeners[name] || []).slice().forEach(function (listener) {
      try { listener(detail); } catch (error) { setTimeout(function () { throw error; }); }
    });
    if (node) node.dispatchEvent(new CustomEvent("adnet:" + name, { detail: detail, bubbles: true, composed: true }));
  }
  function errorText(response, fallback) {
    if (response.status === 0) return "The network did not answer; try again.";
    return (response.body && response.body.message) || fallback || "That did not work; try again.";
  }
  function rewardText(rewards) {
    if (!rewards) return "";
    var parts = [];
    if (rewards.points) parts.push("+" + rewards.points + " points");
    if (rewards.gs && Number(rewards.gs) > 0) parts.push(rewards.gs + " G$");
    return parts.join(" · ");
  }
  // What points are, where a reward shows them (the rewards panel says it in full, with the wallet's total).
  function pointsNote(rewards) {
    return rewards && rewards.points ? "Points are a score adnet keeps for your wallet, not a token: see My rewards." : null;
  }
  function reducedMotion() {
    return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  // ---- wallet (EIP-1193) ---------------------------------------------------------------------------------------
  function provider() { return window.ethereum && typeof window.ethereum.request === "function" ? window.ethereum : null; }
  function connectWallet() {
    if (state.wallet) return Promise.resolve(state.wallet);
    var eth = provider();
    if (!eth) return Promise.reject(new Error("no_wallet"));
    return eth.request({ method: "eth_requestAccounts" }).then(function (accounts) {
      if (!accounts || !WALLET.test(accounts[0])) throw new Error("no_wallet");
      state.wallet = accounts[0].toLowerCase();
      return state.wallet;
    });
  }
  function utf8Hex(text) {
    return "0x" + Array.prototype.map.call(new TextEncoder().encode(text), function (b) {
      return (b + 256).toString(16).slice(1);
    }).join("");
  }
  function word(hex) { return ("0".repeat(64) + hex).slice(-64); }
  function uintWord(decimal) { return word(BigInt(decimal).toString(16)); }
  // ABI-encode the vault's claim(...) call for a claim as the server returns it (its `transaction` object).
  function claimCalldata(claim) {
    var signature = claim.signature.replace(/^0x/, "");
    var padded = signature + "0".repeat((64 - (signature.length % 64)) % 64);
    return "0x" + CLAIM_SELECTOR + word(claim.recipient.replace(/^0x/, "")) + word(claim.token.replace(/^0x/, "")) +
      uintWord(claim.amount) + word(claim.claimRef.replace(/^0x/, "")) + uintWord(claim.nonce) +
      uintWord(claim.deadline) + uintWord(7 * 32) + uintWord(signature.length / 2) + padded;
  }
  // Send ``transaction`` ({to, data, value?}) from the viewer's wallet on chain ``chainId``, switching the wallet
  // to it first; resolves to {wallet, hash}.
  function sendFromWallet(chainId, transaction) {
    var eth = provider();
    if (!eth) return Promise.reject(new Error("no_wallet"));
    var chain = "0x" + BigInt(chainId).toString(16);
    return connectWallet().then(function (wallet) {
      return eth.request({ method: "eth_chainId" }).then(function (current) {
        if (BigInt(current) === BigInt(chain)) return null;
        return eth.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chain }] });
      }).then(function () {
        var request = { from: wallet, to: transaction.to, data: transaction.data };
        if (transaction.value && transaction.value !== "0") request.value = "0x" + BigInt(transaction.value).toString(16);
        return eth.request({ method: "eth_sendTransaction", params: [request] });
      }).then(function (hash) { return { wallet: wallet, hash: hash }; });
    });
  }
  function redeem(claim) {
    return sendFromWallet(claim.chainId, { to: claim.to, data: claimCalldata(claim) }).then(function (sent) {
      return sent.hash;
    });
  }

  // ---- what serving targets and caps by: page keywords (data-keywords) and the viewer id ---------------------------
  // The viewer id counts campaigns' frequency caps; under Do-Not-Track or Global Privacy Control none is sent.
  function cappingViewer() { return optedOut() || !deviceAllowed() ? null : fingerprint(); }
  // A slot's keywords, else the script tag's: comma-separated, trimmed, lower-cased; items the server would refuse
  // (not 1-40 letters, digits, - or _) are left out, and at most 20 are sent, so a sloppy list never empties a slot.
  var KEYWORD = /^[\p{L}\p{N}_-]{1,40}$/u;
  function pageKeywords(text) {
    var seen = [];
    String(text || "").split(",").forEach(function (item) {
      var keyword = item.trim().toLowerCase();
      if (KEYWORD.test(keyword) && seen.indexOf(keyword) < 0 && seen.length < 20) seen.push(keyword);
    });
    return seen.join(",");
  }
  // A shared constructed stylesheet where the browser has them (a page's CSP without 'unsafe-inline' allows it),
  // a <style> element otherwise.
  function styleShadow(root) {
    if (window.CSSStyleSheet && "adoptedStyleSheets" in root) {
      sheet = sheet || new CSSStyleSheet();
      if (!sheet.cssRules.length) sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } else {
      root.appendChild(el("style", { text: CSS }));
    }
  }

  // ---- slots ---------------------------------------------------------------------------------------------------
  function Slot(host, options) {
    options = options || {};
    var attr = host.dataset || {};
    this.host = host;
    this.kind = String(options.kind || attr.kind || "BANNER").toUpperCase().replace(/\s+/g, "");
    this.size = /^\d{1,5}x\d{1,5}$/.test(options.size || attr.size || "") ? (options.size || attr.size) : null;
    this.placement = options.placement || attr.placement || "";
    this.attached = options.attached !== undefined ? !!options.attached : attr.tasks !== undefined;
    this.house = options.house !== undefined ? !!options.house : attr.house !== "off";
    this.keywords = pageKeywords(options.keywords || attr.keywords || data.keywords);
    // An answer served already (a Prebid bid's, docs/publishers.md "Prebid.js"), shown without asking
    // /api/serve, its events reported with the viewer id it was served for (one of this page only without one:
    // nothing is stored) and from the page the auction ran on (this frame's own address is about:srcdoc).
    this.served = options.served || null;
    this.viewer = this.served ? (options.viewer || pageViewer()) : null;
    this.pageUrl = options.pageUrl ? httpUrl(options.pageUrl) : null;
    this.root = host.shadowRoot || host.attachShadow({ mode: "open" });
    host.__adnet = this;
    styleShadow(this.root);
    this.box = el("div", { class: "box" });
    this.live = el("div", { class: "sr", role: "status", "aria-live": "polite" });
    this.root.append(this.box, this.live);
    this.reserve();
  }
  // Reserve the creative's size (and the attached-task rows) before anything loads, so nothing shifts.
  Slot.prototype.reserve = function () {
    if (!this.size) return;
    var parts = this.size.split("x");
    this.host.style.width = parts[0] + "px";
    this.box.style.width = parts[0] + "px";
    this.box.style.aspectRatio = parts[0] + " / " + parts[1];
    if (this.attached) this.host.style.minHeight = "calc(" + parts[1] + "px + " + 2 * TASK_ROW_PX + "px)";
  };
  Slot.prototype.load = function () {
    var self = this;
    // An answer served already is shown once the page's consent signals are known too: its events carry them.
    var asked = this.served ? consentSignals().then(function () { return { ok: true, status: 200, body: self.served }; })
      : this.ask();
    return asked.then(function (response) {
      var answer = response.body;
      if (!response.ok || !answer.kind || answer.kind === "NONE") return self.empty(response.ok ? "none" : "unavailable", response.status);
      emit("serve", { slot: self.host, kind: answer.kind }, self.host);
      if ((answer.kind === "BANNER" || answer.kind === "HOUSE") && answer.ad) self.banner(answer);
      else if (answer.task && UNITS[answer.kind]) UNITS[answer.kind](self, answer.task);
      else return self.empty("none", response.status);
      return answer.kind;
    });
  };
  Slot.prototype.ask = function () {
    var self = this;
    return consentSignals().then(function (known) {
      var params = Object.assign({ siteId: siteId, kind: self.kind, size: self.size, placement: self.placement,
        wallet: state.wallet, attached: self.attached ? "1" : null,
        house: self.house ? null : "0", keywords: self.keywords, viewer: cappingViewer(),
        audience: state.rewards && state.rewards.wallet === state.wallet ? state.rewards.audiencePass : null,
        injectedWallet: provider() ? "1" : null }, known.params);
      return api("GET", "/api/serve?" + query(params));
    });
  };
  Slot.prototype.empty = function (reason, status) {
    this.host.setAttribute("data-adnet-empty", reason);
    if (this.host.hasAttribute("data-collapse")) this.host.style.display = "none";
    emit("empty", { slot: this.host, reason: reason, status: status }, this.host);
    return "NONE";
  };
  Slot.prototype.say = function (text) { this.live.textContent = text; };

  // A paid banner, or the site's own house ad (its events counted at /api/track/house, never billed).
  Slot.prototype.banner = function (answer) {
    var self = this;
    var ad = answer.ad;
    var house = answer.kind === "HOUSE";
    var target = httpUrl(ad.targetUrl);
    var source = httpUrl(ad.bannerUrl);
    var started = performance.now();
    var clicked = false;
    var video = ad.mediaType === "video";
    var media = video
      ? el("video", { class: "media", src: source, muted: true, playsinline: true, loop: true, preload: "metadata",
        "aria-label": ad.description || "Sponsored video", autoplay: !reducedMotion(), controls: reducedMotion() })
      : el("img", { class: "media", src: source, alt: ad.description || (house ? "" : "Sponsored") });
    if (video) media.muted = true;
    var link = target
      ? el("a", { class: "ad", href: target, target: "_blank", rel: house ? "noopener" : "noopener sponsored",
        "aria-label": (house ? "" : "Sponsored: ") + (ad.description || (house ? "from this site" : "advertisement")) +
          " (opens in a new tab)" }, [media])
      : el("div", { class: "ad" }, [media]);
    this.box.append(link);
    if (!house) this.box.append(el("span", { class: "tag", text: "Sponsored" }));
    // "Why this ad?": adnet's rewards page, where the signed-in viewer reads why (GET /api/audiences/why).
    if (!house && ad.trackingToken) this.box.append(el("a", { class: "why", target: "_blank", rel: "noopener",
      href: base + "/rewards#why=" + encodeURIComponent(ad.trackingToken), text: "Why this ad?" }));
    this.host.setAttribute("data-adnet-ad", ad.id);
    this.ad = ad;
    this.track = function (type, extra) {
      if (house) {
        beacon("/api/track/house", { type: type, siteId: siteId, houseAdId: ad.id });
        emit(type.toLowerCase(), { slot: self.host, adId: ad.id, house: true }, self.host);
        return;
      }
      var body = {
        type: type, campaignId: ad.campaignId, adId: ad.id, siteId: siteId, fingerprint: self.viewer || fingerprint(),
        rendered: self.renderTime !== undefined, viewportVisible: !!extra.visible,
        renderTime: self.renderTime === undefined ? null : self.renderTime, timestamp: Date.now(),
        pageUrl: (self.pageUrl || httpUrl(location.href) || "").slice(0, 2048), userAgent: navigator.userAgent.slice(0, 512),
        trackingToken: ad.trackingToken
      };
      Object.assign(body, consent && consent.params);
      if (extra.tab) land(extra.tab, body);
      else if (type === "IMPRESSION" && state.rewards) viewed(body, state.rewards);
      else beacon("/api/track", body);
      emit(type.toLowerCase(), { slot: self.host, adId: ad.id, campaignId: ad.campaignId }, self.host);
    };
    // A click's answer names where to take the viewer (the target with the click id a conversion reports back,
    // docs/conversions.md): the tab opened on the click goes there once the click is recorded, or to the target
    // as served if no answer comes in time; later clicks of the banner follow the same address.
    function land(tab, body) {
      var gone = false;
      function go(url) {
        if (gone) return;
        gone = true;
        try { tab.location.replace(url); } catch (e) { /* the viewer closed the tab */ }
      }
      setTimeout(function () { go(target); }, CLICK_WAIT_MS);
      api("POST", "/api/track", body).then(function (response) {
        var landing = response.ok ? httpUrl(response.body.clickUrl) : null;
        if (landing) link.href = landing;
        go(landing || target);
      });
    }
    // While the viewer is signed in for rewards on this page, an impression once recorded proves the session's
    // wallet for it, so that a goal with a view window may attribute the wallet's later conversion to it
    // (view-through, docs/conversions.md). The proof is the session and the impression's token, never a wallet
    // string.
    function viewed(body, session) {
      api("POST", "/api/track", body).then(function (response) {
        if (response.status === 201 && state.rewards === session) {
          api("POST", "/api/conversions/views", { trackingToken: body.trackingToken }, session.token);
        }
      });
    }
    function onClick(event) {
      if (event.type === "auxclick" && event.button !== 1) return;
      if (clicked || !(house || answer.bannerClickActive)) return;
      clicked = true;
      // A plain click opens the new tab itself, at once (inside the click, so no popup blocker stops it), and sends
      // it on when the click is recorded; a middle click, or a browser that refuses the tab, follows the link.
      var tab = !house && target && event.type === "click" ? window.open("", "_blank") : null;
      if (tab) {
        event.preventDefault();
        try { tab.opener = null; } catch (e) { /* already detached */ }
      }
      self.track("CLICK", { visible: self.visible, tab: tab });
    }
    link.addEventListener("click", onClick);
    link.addEventListener("auxclick", onClick);
    media.addEventListener(video ? "loadeddata" : "load", function () {
      self.renderTime = Math.round(performance.now() - started);
      self.watch(media);
      emit("render", { slot: self.host, adId: ad.id, renderTime: self.renderTime }, self.host);
    }, { once: true });
    if (answer.attachedTasks && answer.attachedTasks.length) this.tasks(answer.attachedTasks.slice(0, 2));
    this.host.style.minHeight = "";  // drawn: as tall as the banner and the tasks it has, fewer rows or none
  };
  // MRC display viewability: at least half of the creative in view, in a visible tab, for one continuous second.
  Slot.prototype.watch = function (media) {
    var self = this;
    var ratio = 0;
    var timer = null;
    var observer;
    function check() {
      self.visible = ratio >= VIEWABLE_RATIO && document.visibilityState === "visible";
      if (self.visible && timer === null) {
        timer = setTimeout(function () {
          observer.disconnect();
          document.removeEventListener("visibilitychange", check);
          self.track("IMPRESSION", { visible: true });
        }, VIEWABLE_MS);
      } else if (!self.visible && timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
    }
    if (!window.IntersectionObserver) return;
    observer = new IntersectionObserver(function (entries) {
      ratio = entries[entries.length - 1].intersectionRatio;
      check();
    }, { threshold: [0, 0.25, VIEWABLE_RATIO, 0.75, 1] });
    observer.observe(media);
    document.addEventListener("visibilitychange", check);
  };

  // ---- attached tasks ------------------------------------------------------------------------------------------
  Slot.prototype.tasks = function (tasks) {
    var self = this;
    var list = el("ul", { class: "tasks foot", "aria-label": "Tasks from the sponsor" });
    this.box.classList.add("top");
    this.rows = {};
    tasks.forEach(function (task) {
      if (!TASKS[task.kind]) return;
      var row = el("li", { class: "task", "data-task": task.id, "data-kind": task.kind }, [el("div", { class: "row" }, [
        el("span", { class: "t", text: task.title }), el("span", { class: "reward", text: rewardText(task.rewards), title: pointsNote(task.rewards) })])]);
      var controls = el("div", { class: "ctl" });
      var message = el("p", { class: "msg", role: "status" });
      row.append(controls, message);
      var view = { slot: self, task: task, row: row, controls: controls,
        say: function (text, isError) { message.textContent = text; message.className = isError ? "msg err" : "msg"; } };
      self.rows[task.id] = view;
      TASKS[task.kind](view);
      list.appendChild(row);
    });
    this.root.appendChild(list);
    this.refreshDone();
  };
  // Mark the tasks this viewer has already completed (the status endpoint knows; the page may have reloaded).
  Slot.prototype.refreshDone = function () {
    var self = this;
    if (!this.rows || !this.ad) return;
    api("GET", "/api/tasks/status?" + query({ wallet: state.wallet, fingerprint: fingerprint(), campaignId: this.ad.campaignId }))
      .then(function (response) {
        var completions = response.ok && (response.body.completions || response.body.tasks) || [];
        completions.forEach(function (completion) {
          var view = self.rows[completion.taskId];
          if (view && !view.done) showDone(view, completion, false);
        });
      });
  };
  function showDone(view, result, fresh) {
    view.done = true;
    var focused = view.row.contains(view.slot.root.activeElement);
    view.controls.textContent = "";
    var done = view.controls.appendChild(el("span", { class: "done", text: "Done", tabindex: "-1" }));
    if (focused) done.focus();  // keyboard users stay in the row whose controls just went
    var award = rewardText(result.awarded ? { points: result.awarded.points, gs: result.awarded.gs } : null);
    view.say(award ? "Earned " + award : "");
    var claim = result.transaction || result.claim;
    if (fresh) {
      var detail = { slot: view.slot.host, taskId: view.task.id, completionId: result.completionId,
        awarded: result.awarded, transaction: claim || null };
      emit("complete", detail, view.slot.host);
      if (claim) emit("claim", detail, view.slot.host);
    }
    if (claim && claim.to && provider()) {
      var button = el("button", { type: "button", class: "primary", text: "Redeem on-chain", onclick: function () {
        button.disabled = true;
        view.say("Confirm the transaction in your wallet…");
        redeem(claim).then(function (hash) {
          button.remove();
          view.say("Redeemed. Transaction " + String(hash).slice(0, 12) + "…");
          emit("redeem", { slot: view.slot.host, taskId: view.task.id, txHash: hash, transaction: claim }, view.slot.host);
        }, function () {
          button.disabled = false;
          view.say("The wallet did not send the transaction.", true);
        });
      } });
      view.controls.appendChild(button);
    } else if (!claim && result.claimStatus === "issued" && result.claimRef && provider()) {
      view.controls.appendChild(earlierClaimButton(view, result.claimRef));
    }
  }
  // Submit a completion; ``onPending``, when given, takes an answer that says to wait (not yet confirmed).
  function complete(view, wallet, proof, onPending) {
    view.say("Checking…");
    return api("POST", "/api/tasks/complete", { taskId: view.task.id, wallet: wallet, fingerprint: fingerprint(),
      proof: proof, siteId: siteId })
      .then(function (response) {
        var body = response.body;
        if (response.ok || body.error === "already_completed") {
          showDone(view, body, response.ok);
          return true;
        }
        if (onPending && body.error === "not_confirmed") {
          onPending(response);
          return false;
        }
        view.say(errorText(response), true);
        return false;
      });
  }
  function withWallet(view, then) {
    connectWallet().then(then, function () {
      view.say(provider() ? "Connect your wallet to receive the reward." :
        "Open this page in a wallet browser (or install a wallet) to take part.", true);
    });
  }
  // ---- the on-chain task ----------------------------------------------------------------------------------------
  // With a configured transaction, the embed puts it before the viewer's wallet (EIP-1193 eth_sendTransaction),
  // submits its hash, and while adnet answers that it needs more confirmations, says so and asks again every
  // CONFIRM_RETRY_MS until it is confirmed (or the page closes). Without one, the viewer pastes the hash of a
  // transaction sent elsewhere.
  var CONFIRM_RETRY_MS = 3000;
  function onchainPrepared(view) {
    var button = el("button", { type: "button", class: "primary", text: "Send with wallet", onclick: function () {
      if (view.busy) return;
      view.busy = true;
      button.disabled = true;
      view.say("Confirm the transaction in your wallet…");
      sendFromWallet(view.task.transaction.chainId, view.task.transaction).then(function (sent) {
        view.say("Sent. Waiting for the chain…");
        confirmUntilDone(view, sent.wallet, sent.hash, button);
      }, function () {
        view.busy = false;
        button.disabled = false;
        view.say(provider() ? "The wallet did not send the transaction." :
          "Open this page in a wallet browser (or install a wallet) to take part.", true);
      });
    } });
    view.controls.appendChild(button);
  }
  function confirmUntilDone(view, wallet, hash, button) {
    var pending = false;
    complete(view, wallet, { txHash: hash }, function (response) {
      pending = true;
      var needed = String(response.body.message || "").replace(/;?\s*retry shortly\.?$/i, "");
      view.say((needed || "The transaction is not confirmed yet") + "; checking again…");
      setTimeout(function () { confirmUntilDone(view, wallet, hash, button); }, CONFIRM_RETRY_MS);
    }).then(function (done) {
      if (done || pending) return;
      view.busy = false;  // refused (the reason is shown): the viewer may send again
      button.disabled = false;
    });
  }
  function onchainPasted(view) {
    var input = el("input", { type: "text", placeholder: "0x… transaction hash", "aria-label": "Transaction hash",
      size: 18, spellcheck: "false" });
    var button = el("button", { type: "button", text: "Check", onclick: function () {
      var hash = input.value.trim();
      if (!TX_HASH.test(hash)) { view.say("Paste the hash of your transaction (0x and 64 hex digits).", true); return; }
      withWallet(view, function (wallet) { complete(view, wallet, { txHash: hash }); });
    } });
    view.controls.append(input, button);
  }

  var TASKS = {
    VISIT_URL: function (view) {
      var task = view.task;
      var opened = null;
      var href = httpUrl(task.visitUrl);
      if (!href) return;
      // The dwell is the time the visitor spends away on the sponsor's page, measured until they come back. adnet
      // measures it itself from when the visit link reached it, a network trip after the click: the embed asks for
      // a second more than the task's minimum, so that a visitor it sends back is not refused for milliseconds.
      var needed = task.minDwellMs + 1000;
      function back() {
        if (opened === null || view.done || view.busy || document.visibilityState !== "visible") return;
        var dwell = Date.now() - opened;
        if (dwell < needed) {
          view.say("Stay on the page at least " + Math.ceil(needed / 1000) + " s to earn the reward.", true);
          return;
        }
        view.busy = true;
        connectWallet().then(function (wallet) {
          return complete(view, wallet, { dwellMs: dwell }).then(function (ok) { if (ok) stop(); });
        }, function () {
          view.say(provider() ? "Connect your wallet to receive the reward." :
            "Open this page in a wallet browser (or install a wallet) to take part.", true);
        }).then(function () { view.busy = false; });
      }
      function stop() {
        document.removeEventListener("visibilitychange", back);
        window.removeEventListener("focus", back);
      }
      var link = el("a", { class: "btn", href: href + (href.indexOf("?") < 0 ? "?" : "&") + query({ fingerprint: fingerprint() }),
        target: "_blank", rel: "noopener", text: "Visit", onclick: function () {
          if (opened === null) opened = Date.now();
          view.say("Come back here after at least " + Math.ceil(needed / 1000) + " s on the page.");
          claimButton.hidden = false;
        } });
      var claimButton = el("button", { type: "button", text: "I'm back", hidden: true, onclick: back });
      view.controls.append(link, claimButton);
      document.addEventListener("visibilitychange", back);
      window.addEventListener("focus", back);
    },
    SIGN_MESSAGE: function (view) {
      var task = view.task;
      var button = el("button", { type: "button", text: "Sign with wallet", onclick: function () {
        var eth = provider();
        if (!eth) {
          view.say("This task needs a wallet: open the page in a wallet browser or install one.", true);
          return;
        }
        button.disabled = true;
        var wallet;
        connectWallet().then(function (account) {
          wallet = account;
          return api("GET", task.messageUrl + "?" + query({ wallet: wallet }));
        }).then(function (response) {
          if (!response.ok || !response.body.message) return view.say(errorText(response), true);
          var message = response.body.message;
          view.say("Sign the message in your wallet…");
          return eth.request({ method: "personal_sign", params: [utf8Hex(message), wallet] }).then(function (signature) {
            return complete(view, wallet, { signature: signature, message: message });
          });
        }).catch(function () {
          view.say(wallet ? "The message was not signed." : "Connect your wallet to receive the reward.", true);
        }).then(function () { button.disabled = false; });
      } });
      view.controls.appendChild(button);
    },
    ONCHAIN_EVENT: function (view) {
      if (view.task.transaction && view.task.transaction.chainId) onchainPrepared(view);
      else onchainPasted(view);
    },
    QUIZ: function (view) {
      var task = view.task;
      // The question is the legend of its choices, on a line of its own above them.
      var choices = el("div", { class: "opts" });
      view.controls.appendChild(el("fieldset", { class: "choices" }, [el("legend", { text: task.question }), choices]));
      function answer(value) {
        withWallet(view, function (wallet) { complete(view, wallet, { answer: value }); });
      }
      if (task.choices && task.choices.length) {
        task.choices.forEach(function (choice) {
          choices.appendChild(el("button", { type: "button", text: choice, onclick: function () { answer(choice); } }));
        });
      } else {
        var input = el("input", { type: "text", "aria-label": task.question, size: 14 });
        choices.append(input, el("button", { type: "button", text: "Answer", onclick: function () { answer(input.value.trim()); } }));
      }
    }
  };

  // ---- standalone units ----------------------------------------------------------------------------------------
  // A unit is a card as wide as its slot and as tall as its content: the size a slot reserved for a banner is let
  // go, so that a short poll leaves no empty space under it.
  function unitFrame(slot, task) {
    slot.box.className = "card";
    slot.box.removeAttribute("style");
    slot.host.style.minHeight = "";
    slot.host.setAttribute("data-adnet-unit", task.id);
    var content = el("div", { class: "content" });
    slot.box.append(el("div", { class: "head" }, [el("span", { class: "tag", text: "Sponsored" }),
      el("span", { class: "reward", text: rewardText(task.rewards), title: pointsNote(task.rewards) })]),
    el("h" + headingLevel(slot.host), { class: "heading", id: "q", text: task.question || task.title }), content);
    return content;
  }
  // A unit's question is a heading in the page's outline, at the level data-heading-level (1 to 6) gives on the
  // slot or on the script tag; without one, one level below the page's last heading before the slot (h2 when there
  // is none), so the outline never skips a level.
  function headingLevel(host) {
    var given = Number(host.getAttribute("data-heading-level") || data.headingLevel);
    if (given >= 1 && given <= 6 && Math.floor(given) === given) return given;
    var level = 1;
    Array.prototype.forEach.call(document.querySelectorAll("h1,h2,h3,h4,h5,h6"), function (heading) {
      if (heading.compareDocumentPosition(host) & Node.DOCUMENT_POSITION_FOLLOWING) level = Number(heading.tagName[1]);
    });
    return Math.min(level + 1, 6);
  }
  function interact(slot, task, extra) {
    var body = { taskId: task.id, fingerprint: fingerprint(), siteId: siteId };
    if (state.wallet) body.wallet = state.wallet;
    Object.keys(extra).forEach(function (key) { body[key] = extra[key]; });
    return api("POST", "/api/interactions", body);
  }
  function finished(slot, task, content, body) {
    var focused = slot.box.contains(slot.root.activeElement);
    content.textContent = "";
    var award = rewardText(body.awarded);
    var thanks = el("p", { class: "done", text: "Thank you!", tabindex: "-1" });
    content.appendChild(thanks);
    if (award) content.appendChild(el("p", { class: "reward", text: "Earned " + award, title: pointsNote(body.awarded) }));
    if (focused) thanks.focus();  // where the keyboard was, the answer's result
    slot.say("Thank you, your answer was recorded.");
    emit("interaction", { slot: slot.host, taskId: task.id, kind: task.kind, status: body.status || "recorded",
      interactionId: body.interactionId, awarded: body.awarded || null }, slot.host);
  }
  function failed(slot, content, response) {
    var message = content.querySelector(".msg") || content.appendChild(el("p", { class: "msg err", role: "alert" }));
    message.textContent = errorText(response);
    slot.say(message.textContent);
  }
  function submitted(slot, task, content, response) {
    if (response.ok || (response.body && response.body.error === "already_completed")) finished(slot, task, content, response.body);
    else failed(slot, content, response);
  }
  var UNITS = {
    POLL: function (slot, task) {
      var content = unitFrame(slot, task);
      var group = el("div", { class: "opts" });
      content.appendChild(el("fieldset", { class: "choices poll", "aria-labelledby": "q" }, [group]));
      (task.options || []).forEach(function (option) {
        group.appendChild(el("button", { type: "button", text: option.label, "data-option": option.id, onclick: function () {
          // Busy rather than disabled: a disabled button would drop the keyboard's focus to the page's top.
          if (group.hasAttribute("aria-busy")) return;
          group.setAttribute("aria-busy", "true");
          interact(slot, task, { proof: { optionId: option.id } }).then(function (response) {
            group.removeAttribute("aria-busy");
            submitted(slot, task, content, response);
          });
        } }));
      });
    },
    FEEDBACK: function (slot, task) {
      var content = unitFrame(slot, task);
      var rating = null;
      var form = el("form", { novalidate: true });
      if (task.rating) {
        var stars = el("div", { class: "stars", role: "radiogroup", "aria-label": "Rating" });
        for (var value = task.rating.min; value <= task.rating.max; value++) {
          stars.appendChild(starButton(value));
        }
        form.appendChild(stars);
      }
      var text = null;
      if (task.text) {
        var id = "adnet-fb-" + task.id;
        text = el("textarea", { id: id, maxlength: task.text.maxLength, required: task.text.required });
        form.append(el("label", { for: id, text: task.text.required ? "Your comment" : "Your comment (optional)" }), text);
      }
      form.appendChild(el("button", { type: "submit", class: "primary", text: "Send" }));
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var proof = {};
        if (rating !== null) proof.rating = rating;
        if (text && text.value.trim()) proof.text = text.value.trim();
        if (task.rating && task.rating.required && rating === null) return failed(slot, content, { status: 400, body: { message: "Choose a rating first." } });
        interact(slot, task, { proof: proof }).then(function (response) { submitted(slot, task, content, response); });
      });
      content.appendChild(form);
      function starButton(value) {
        return el("button", { type: "button", role: "radio", "aria-checked": "false", "aria-label": value + " of " + task.rating.max,
          text: value <= 0 ? String(value) : "☆", "data-rating": value, onclick: function (event) {
            rating = value;
            Array.prototype.forEach.call(event.currentTarget.parentNode.children, function (b) {
              var star = Number(b.getAttribute("data-rating"));
              b.setAttribute("aria-checked", String(star === value));
              b.classList.toggle("on", star <= value);
              if (star > 0) b.textContent = star <= value ? "★" : "☆";  // filled or not: not by colour alone
            });
          } });
      }
    },
    SURVEY: function (slot, task) {
      var content = unitFrame(slot, task);
      var questions = task.questions || [];
      var key = "survey:" + task.id;
      var saved = {};
      try { saved = JSON.parse(storage(key) || "{}") || {}; } catch (e) { saved = {}; }
      var progress = { sessionId: saved.sessionId || null, step: Math.min(saved.step || 0, questions.length - 1),
        answers: saved.answers || {} };
      function save() { storage(key, JSON.stringify(progress)); }
      function show() {
        content.textContent = "";
        var question = questions[progress.step];
        var previous = progress.answers[question.id];
        var field = surveyField(question, previous, task.id);
        content.append(el("p", { class: "step", text: "Question " + (progress.step + 1) + " of " + questions.length }),
          field.node);
        var back = el("button", { type: "button", text: "Back", disabled: progress.step === 0, onclick: function () {
          progress.step -= 1;
          save();
          show();
        } });
        var last = progress.step === questions.length - 1;
        var next = el("button", { type: "button", class: "primary", text: last ? "Finish" : "Next", onclick: function () {
          var value = field.value();
          if (value === null && question.required) return failed(slot, content, { status: 400, body: { message: "Please answer this question." } });
          var proof = { questionId: question.id };
          if (value !== null) proof[ANSWER_KEYS[question.type]] = value;
          next.disabled = true;
          var extra = { proof: proof };
          if (progress.sessionId) extra.sessionId = progress.sessionId;
          interact(slot, task, extra).then(function (response) {
            next.disabled = false;
            var body = response.body;
            if (!response.ok) {
              if (body.error === "already_completed" || body.error === "session_completed") {
                storage(key, null);
                return finished(slot, task, content, body);
              }
              // A session that expired or is not this viewer's (another wallet since) cannot go on: start over.
              if (progress.sessionId && (response.status === 403 || response.status === 404 || response.status === 409)) {
                progress = { sessionId: null, step: 0, answers: {} };
                save();
                show();
              }
              return failed(slot, content, response);
            }
            progress.sessionId = body.sessionId || progress.sessionId;
            progress.answers[question.id] = value;
            if (body.status === "completed") {
              storage(key, null);
              return finished(slot, task, content, body);
            }
            var index = body.question ? questions.map(function (q) { return q.id; }).indexOf(body.question.id) : -1;
            progress.step = index >= 0 ? index : Math.min(progress.step + 1, questions.length - 1);
            save();
            show();
          });
        } });
        content.appendChild(el("div", { class: "nav" }, [back, next]));
        var focusable = content.querySelector("input,textarea,button:not([disabled])");
        if (focusable && slot.started) focusable.focus();
        slot.started = true;
      }
      if (questions.length) show();
    }
  };
  var ANSWER_KEYS = { single: "optionId", multiple: "optionIds", rating: "rating", text: "text" };
  function surveyField(question, previous, taskId) {
    var id = "adnet-q-" + taskId + "-" + question.id;
    var node = el("fieldset", { class: question.type === "rating" ? "choices scale" : "choices" },
      [el("legend", { text: question.prompt })]);
    if (question.type === "text") {
      var area = el("textarea", { id: id, maxlength: question.maxLength, "aria-label": question.prompt });
      area.value = previous || "";
      node.appendChild(area);
      return { node: node, value: function () { return area.value.trim() || null; } };
    }
    var choices = question.type === "rating"
      ? Array.apply(null, Array(question.max - question.min + 1)).map(function (_, i) { var v = question.min + i; return { id: v, label: String(v) }; })
      : question.options;
    var inputs = choices.map(function (choice, index) {
      var input = el("input", { type: question.type === "multiple" ? "checkbox" : "radio", name: id, id: id + "-" + index,
        value: String(choice.id) });
      input.checked = previous !== undefined && previous !== null && [].concat(previous).map(String).indexOf(String(choice.id)) >= 0;
      node.appendChild(el("label", { class: "opt", for: id + "-" + index }, [input, document.createTextNode(choice.label)]));
      return input;
    });
    return { node: node, value: function () {
      var picked = inputs.filter(function (input) { return input.checked; }).map(function (input) { return input.value; });
      if (!picked.length) return null;
      if (question.type === "multiple") return picked;
      return question.type === "rating" ? Number(picked[0]) : picked[0];
    } };
  }

  // ---- viewer's rewards ("My rewards") -------------------------------------------------------------------------
  // The wallet signs adnet's rewards sign-in message once per page; the session it opens lists and redeems this
  // wallet's rewards and nothing else, and its token stays in this page's memory. docs/rewards.md.
  function rewardsSession() {
    if (state.rewards && state.rewards.wallet === state.wallet) return Promise.resolve(state.rewards);
    var eth = provider();
    if (!eth) return Promise.reject(new Error("no_wallet"));
    return connectWallet().then(function (wallet) {
      return api("POST", "/api/rewards/message", { address: wallet }).then(function (written) {
        if (!written.ok) throw new Error(errorText(written));
        return eth.request({ method: "personal_sign", params: [utf8Hex(written.body.message), wallet] })
          .then(function (signature) {
            return api("POST", "/api/rewards/session", { message: written.body.message, signature: signature });
          });
      }).then(function (opened) {
        if (!opened.ok) throw new Error(errorText(opened));
        state.rewards = { wallet: wallet, token: opened.body.token, audiencePass: opened.body.audiencePass };
        return state.rewards;
      });
    });
  }
  function fetchRewards() {
    return rewardsSession().then(function (session) {
      return api("GET", "/api/rewards", undefined, session.token).then(function (response) {
        if (response.status === 401) state.rewards = null;
        if (!response.ok) throw new Error(errorText(response));
        return response.body;
      });
    });
  }
  // A completed task whose claim the page no longer has (a reload, a declined prompt): get it from the wallet's
  // rewards and redeem it.
  function earlierClaimButton(view, claimRef) {
    var button = el("button", { type: "button", class: "primary", text: "Redeem", onclick: function () {
      button.disabled = true;
      view.say("Sign in to your rewards in your wallet…");
      fetchRewards().then(function (body) {
        var reward = (body.rewards || []).filter(function (item) { return item.claimRef === claimRef; })[0];
        if (!reward || !reward.transaction) throw new Error("This reward can no longer be redeemed.");
        view.say("Confirm the transaction in your wallet…");
        return redeem(reward.transaction).then(function (hash) {
          button.remove();
          view.say("Redeemed. Transaction " + String(hash).slice(0, 12) + "…");
          emit("redeem", { slot: view.slot.host, taskId: view.task.id, txHash: hash, transaction: reward.transaction },
            view.slot.host);
        });
      }).catch(function (error) {
        button.disabled = false;
        view.say(error && error.message && !/^no_wallet$/.test(error.message) && !error.code ? error.message :
          "The wallet did not sign or send.", true);
      });
    } });
    return button;
  }
  function RewardsPanel(host) {
    this.host = host;
    this.sent = {};
    this.root = host.shadowRoot || host.attachShadow({ mode: "open" });
    host.__adnetRewards = this;
    styleShadow(this.root);
    this.box = el("section", { class: "card", "aria-label": "My rewards" });
    this.live = el("div", { class: "sr", role: "status", "aria-live": "polite" });
    this.root.append(this.box, this.live);
    this.start();
  }
  RewardsPanel.prototype.start = function () {
    var self = this;
    this.box.textContent = "";
    var open = el("button", { type: "button", class: "primary", text: "My rewards", onclick: function () { self.open(open); } });
    this.message = el("p", { class: "msg", role: "status" });
    this.box.append(open, this.message);
  };
  RewardsPanel.prototype.say = function (text, isError) {
    this.message.textContent = text;
    this.message.className = isError ? "msg err" : "msg";
    this.live.textContent = text;
  };
  RewardsPanel.prototype.open = function (button) {
    var self = this;
    if (!provider()) return this.say("Open this page in a wallet browser (or install a wallet) to see your rewards.", true);
    button.disabled = true;
    this.say("Sign in to your rewards in your wallet…");
    return fetchRewards().then(function (body) { self.show(body); }, function (error) {
      button.disabled = false;
      self.say(error && error.message && !error.code && error.message !== "no_wallet" ? error.message :
        "The wallet did not sign in.", true);
    });
  };
  RewardsPanel.prototype.reload = function () {
    var self = this;
    return fetchRewards().then(function (body) { self.show(body); }, function (error) { self.say(error.message, true); });
  };
  RewardsPanel.prototype.show = function (body) {
    var self = this;
    this.box.textContent = "";
    this.message = el("p", { class: "msg", role: "status" });
    var points = body.points || { total: 0, about: "" };
    var gs = body.gs || { earned: "0", redeemable: "0" };
    var level = this.host.getAttribute("data-heading-level");
    if (!/^[2-6]$/.test(level || "")) level = "3";
    this.box.append(
      el("h" + level, { class: "heading", text: "My rewards" }),
      el("p", { class: "points" }, [el("strong", { text: points.total + " points" }),
        document.createTextNode(" · " + gs.earned + " G$ earned, " + gs.redeemable + " G$ to redeem")]),
      el("p", { class: "reward about", text: points.about }));
    var waiting = (body.rewards || []).filter(function (item) { return item.redeemable && !self.sent[item.claimRef]; });
    if (body.redeemAll && waiting.length > 1) {
      var all = el("button", { type: "button", class: "primary", text: "Redeem all (" + body.redeemAllCount + ")",
        onclick: function () {
          all.disabled = true;
          self.say("Confirm the transaction in your wallet…");
          sendFromWallet(body.redeemAll.chainId, body.redeemAll).then(function (sent) {
            var hash = sent.hash;
            (body.redeemAllClaimRefs || []).forEach(function (claimRef) { self.sent[claimRef] = hash; });
            emit("redeem", { txHash: hash, count: body.redeemAllCount }, self.host);
            self.show(body);
            self.say("Sent. Transaction " + String(hash).slice(0, 12) + "…");
          }, function () {
            all.disabled = false;
            self.say("The wallet did not send the transaction.", true);
          });
        } });
      this.box.appendChild(all);
    }
    var list = el("ul", { class: "tasks", "aria-label": "Rewards" });
    (body.rewards || []).forEach(function (item) { list.appendChild(self.row(item)); });
    if (!(body.rewards || []).length) list.appendChild(el("li", { class: "task", text: "Nothing earned yet with this wallet." }));
    this.audiences = el("div", { class: "audiences" });
    this.box.append(list, this.audiences, this.message);
    this.showAudiences();
  };
  // Which wallet audiences adnet found this wallet in, and its switch for wallet targeting. docs/privacy.md.
  RewardsPanel.prototype.showAudiences = function (changed) {
    var self = this;
    var session = state.rewards;
    if (!session) return Promise.resolve();
    var asked = changed === undefined ? api("GET", "/api/audiences", undefined, session.token) :
      api("POST", "/api/audiences/targeting", { enabled: changed }, session.token);
    return asked.then(function (response) {
      if (!response.ok) return self.say(errorText(response), true);
      var found = response.body;
      var level = self.host.getAttribute("data-heading-level");
      var heading = "h" + (Math.min(Number(/^[2-6]$/.test(level || "") ? level : "3") + 1, 6));
      var items = el("ul", { class: "tasks", "aria-label": "Your wallet audiences" });
      (found.audiences || []).forEach(function (text) { items.appendChild(el("li", { class: "task", text: text })); });
      if (!(found.audiences || []).length) items.appendChild(el("li", { class: "task", text: found.targetingEnabled ?
        "Your wallet is in no advertiser's audience now." : "Wallet targeting is off: adnet keeps nothing about your wallet's holdings." }));
      var toggle = el("button", { type: "button", "data-audience-switch": found.targetingEnabled ? "off" : "on",
        text: found.targetingEnabled ? "Switch wallet targeting off" : "Switch wallet targeting on", onclick: function () {
          toggle.disabled = true;
          self.showAudiences(!found.targetingEnabled);
        } });
      self.audiences.textContent = "";
      self.audiences.append(el(heading, { class: "heading", text: "Ads chosen by your wallet" }),
        el("p", { class: "reward about", text: "Advertisers name what a wallet holds or did on-chain; adnet checks your " +
          "signed-in wallet and never tells them who you are." }), items, toggle);
      // Arrived from an ad's "Why this ad?" link: why that ad was shown to this wallet.
      var why = /[#&]why=([^&]+)/.exec(location.hash);
      if (why) api("GET", "/api/audiences/why?token=" + why[1], undefined, session.token).then(function (answer) {
        var told = answer.body || {};
        self.audiences.append(el("p", { class: "reward", "data-why": told.group || 0, text: !answer.ok ? errorText(answer) :
          told.group ? "Why you saw this ad: the advertiser chose wallets that " + told.rules.join(" and ") +
            (told.yours ? "; your wallet is one of them." : "; adnet does not find your wallet in it now.") :
          "This ad was not chosen by your wallet: it was shown by the page, not by your holdings." }));
      });
    });
  };
  RewardsPanel.prototype.row = function (item) {
    var self = this;
    var award = rewardText(item.awarded);
    var row = el("li", { class: "task", "data-reward": item.id }, [el("div", { class: "row" }, [
      el("span", { class: "t", text: item.title }), el("span", { class: "reward", text: award })])]);
    var state = el("p", { class: "msg", text: rewardState(item, self.sent[item.claimRef]) });
    if (item.redeemable && !self.sent[item.claimRef]) {
      var button = el("button", { type: "button", text: "Redeem", onclick: function () {
        button.disabled = true;
        self.say("Confirm the transaction in your wallet…");
        redeem(item.transaction).then(function (hash) {
          self.sent[item.claimRef] = hash;
          button.remove();
          state.textContent = rewardState(item, hash);
          emit("redeem", { txHash: hash, transaction: item.transaction }, self.host);
          self.say("Sent. Transaction " + String(hash).slice(0, 12) + "…");
        }, function () {
          button.disabled = false;
          self.say("The wallet did not send the transaction.", true);
        });
      } });
      row.appendChild(button);
    }
    row.appendChild(state);
    return row;
  };
  function rewardState(item, sentHash) {
    if (sentHash) return "Redeem sent (" + String(sentHash).slice(0, 12) + "…), confirming on-chain.";
    if (!item.claimStatus) return "Points only.";
    if (item.claimStatus === "redeemed") return "Redeemed.";
    if (item.claimStatus === "expired" || !item.redeemable) return "Expired: its deadline passed unredeemed.";
    return "Ready to redeem.";
  }
  function rewards(element) {
    if (!element) return null;
    if (!element.__adnetRewards) new RewardsPanel(element);
    return element.__adnetRewards;
  }

  // ---- public API ----------------------------------------------------------------------------------------------
  var lazy = window.IntersectionObserver ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (!entry.isIntersecting) return;
      lazy.unobserve(entry.target);
      var slot = entry.target.__adnet;
      if (slot && slot.pending) slot.pending();
    });
  }, { rootMargin: "200px 0px" }) : null;

  function render(element, options) {
    if (!element || element.__adnet) return Promise.resolve(element && element.__adnet ? "RENDERED" : "NONE");
    var slot;
    try { slot = new Slot(element, options); } catch (e) { return Promise.resolve("NONE"); }
    state.slots.push(slot);
    if (!siteId) return Promise.resolve(slot.empty("unconfigured", 0));
    return new Promise(function (resolve) {
      slot.pending = function () { slot.pending = null; resolve(slot.load()); };
      if (lazy && !(options && options.lazy === false)) lazy.observe(element);
      else slot.pending();
    });
  }
  function scan(root) {
    Array.prototype.forEach.call((root || document).querySelectorAll("[data-adnet-slot]"), function (element) {
      if (!element.__adnet) render(element);
    });
    Array.prototype.forEach.call((root || document).querySelectorAll("[data-adnet-rewards]"), rewards);
  }
  function identify(wallet) {
    if (wallet !== null && !WALLET.test(String(wallet))) return false;
    state.wallet = wallet ? String(wallet).toLowerCase() : null;
    state.slots.forEach(function (slot) { slot.refreshDone(); });
    emit("identify", { wallet: state.wallet });
    return true;
  }
  function on(name, listener) {
    (state.listeners[name] = state.listeners[name] || []).push(listener);
    return function () { state.listeners[name] = state.listeners[name].filter(function (l) { return l !== listener; }); };
  }
  var adnet = {
    version: VERSION, identify: identify, render: render, rewards: rewards, on: on,
    fingerprint: fingerprint, wallet: function () { return state.wallet; },
    push: function (command) { if (typeof command === "function") command(adnet); }
  };
  window.adnet = adnet;
  // Commands queued before the script loaded: window.adnet = window.adnet || []; adnet.push(fn).
  if (Array.isArray(existing)) existing.forEach(adnet.push);

  function start() {
    consentSignals();
    scan(document);
    if (window.MutationObserver) {
      new MutationObserver(function (records) {
        records.forEach(function (record) {
          Array.prototype.forEach.call(record.addedNodes, function (node) {
            if (node.nodeType !== 1) return;
            if (node.hasAttribute("data-adnet-slot") && !node.__adnet) render(node);
            else if (node.hasAttribute("data-adnet-rewards")) rewards(node);
            else if (node.querySelector) scan(node);
          });
        });
      }).observe(document.documentElement, { childList: true, subtree: true });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(window, document);
