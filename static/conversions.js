/* adnet's landing-page snippet (docs/conversions.md, "Proving the visitor's wallet"): keeps the click id the page
   was opened with, and, when the page calls adnetConversions.bind() (after the visitor connected a wallet), has the
   injected wallet (EIP-1193) sign the binding message naming the click id and posts it to adnet. The message is
   the one adnet.conversions.binding checks: a change here is a change there. */
(function () {
  "use strict";
  var VERSION = "1.0.0";
  var script = document.currentScript;
  var origin = (script && script.getAttribute("data-adnet")) || (script ? new URL(script.src).origin : "");
  var param = (script && script.getAttribute("data-param")) || "adnet_click";
  var KEY = "adnet_click_id";

  function clickId() {
    var fromUrl = new URLSearchParams(window.location.search).get(param);
    try {
      if (fromUrl) { window.localStorage.setItem(KEY, fromUrl); }
      return fromUrl || window.localStorage.getItem(KEY);
    } catch (e) {
      return fromUrl;
    }
  }

  function message(id) {
    return "Connect this wallet to my click on an adnet ad.\n\nClick: " + id;
  }

  function hex(text) {
    var bytes = new TextEncoder().encode(text);
    var out = "0x";
    for (var i = 0; i < bytes.length; i += 1) { out += bytes[i].toString(16).padStart(2, "0"); }
    return out;
  }

  /* Bind the connected wallet to the kept click: resolves to adnet's answer ({status: "bound", wallet,
     campaignId}, or {error, message}), or null when there is no click id or no wallet. */
  async function bind(provider) {
    var wallet = provider || window.ethereum;
    var id = clickId();
    if (!id || !wallet) { return null; }
    var accounts = await wallet.request({method: "eth_requestAccounts"});
    if (!accounts || !accounts.length) { return null; }
    var signature = await wallet.request({method: "personal_sign", params: [hex(message(id)), accounts[0]]});
    var response = await fetch(origin + "/api/conversions/bind", {
      method: "POST", headers: {"Content-Type": "application/json"}, credentials: "omit",
      body: JSON.stringify({clickId: id, wallet: accounts[0], signature: signature})
    });
    return response.json();
  }

  clickId();
  window.adnetConversions = {version: VERSION, clickId: clickId, bind: bind};
}());
