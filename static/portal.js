// adnet portal: the few lines of wallet glue (EIP-1193) the server-rendered pages need. The server prepares every
// message and transaction; this script only asks the browser's wallet to sign or send them, and reports back. It
// also sets how htmx treats answers and shows a form's request in progress.
(function () {
  "use strict";

  // A refusal (4xx, or 503 when the chain cannot be reached) carries the fragment that says what went wrong beside
  // the field it concerns: htmx swaps it like a success. Other server errors leave the page as it is.
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "4..|503", swap: true },
    { code: "...", swap: false, error: true }
  ];

  // While a request runs, the element that sent it is aria-busy; a form's hx-disabled-elt and hx-indicator
  // (templates/portal/_busy.html) disable its submit button and show its busy note.
  document.addEventListener("htmx:beforeRequest", function (event) {
    event.detail.elt.setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    event.detail.elt.removeAttribute("aria-busy");
  });

  var REJECTED = 4001;
  var UNKNOWN_CHAIN = 4902;

  function csrfToken() {
    var field = document.querySelector("input[name=csrf_token]");
    return field ? field.value : "";
  }

  function say(scope, text, isError) {
    var target = scope.querySelector("[data-wallet-status]");
    if (!target) { return; }
    target.textContent = text;
    target.classList.toggle("error", Boolean(isError));
  }

  function wallet() {
    if (!window.ethereum || typeof window.ethereum.request !== "function") {
      var error = new Error("No browser wallet found: install one (such as MetaMask) and reload this page.");
      error.code = "no_wallet";
      throw error;
    }
    return window.ethereum;
  }

  function explain(error) {
    if (error && error.code === REJECTED) { return "You declined the request in your wallet."; }
    if (error && error.code === "no_wallet") { return error.message; }
    if (error && error.code === "wrong_chain") { return error.message; }
    return "The wallet reported an error: " + ((error && error.message) || String(error));
  }

  function hex(number) { return "0x" + Number(number).toString(16); }

  function utf8Hex(text) {
    var bytes = new TextEncoder().encode(text);
    var out = "0x";
    for (var i = 0; i < bytes.length; i += 1) { out += bytes[i].toString(16).padStart(2, "0"); }
    return out;
  }

  // Resolves when the wallet is on chainId; otherwise rejects with code "wrong_chain".
  function requireChain(chainId) {
    return wallet().request({ method: "eth_chainId" }).then(function (current) {
      if (parseInt(current, 16) !== Number(chainId)) {
        var error = new Error("Your wallet is on chain " + parseInt(current, 16) + "; adnet uses chain " +
          chainId + ". Switch networks to continue.");
        error.code = "wrong_chain";
        throw error;
      }
    });
  }

  function switchChain(chainId) {
    return wallet().request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex(chainId) }] })
      .catch(function (error) {
        if (error && error.code === UNKNOWN_CHAIN) {
          throw new Error("Your wallet does not know chain " + chainId + "; add it in the wallet first.");
        }
        throw error;
      });
  }

  // Sign-in: address → server-written SIWE message → personal_sign → a plain form POST (303 to the dashboard).
  function signIn(box) {
    var chainId = box.getAttribute("data-chain-id");
    var switchButton = box.querySelector("[data-wallet-switch]");
    var form = box.querySelector("#signin-form");
    var address;
    switchButton.hidden = true;
    say(box, "Asking your wallet for its address…");
    return Promise.resolve().then(function () {
      return wallet().request({ method: "eth_requestAccounts" });
    }).then(function (accounts) {
      address = accounts[0];
      return requireChain(chainId);
    }).then(function () {
      say(box, "Preparing the sign-in message…");
      var body = new URLSearchParams({ address: address, csrf_token: csrfToken() });
      return fetch("/portal/signin/message", { method: "POST", body: body, credentials: "same-origin" });
    }).then(function (response) {
      if (!response.ok) { throw new Error("adnet refused to prepare the message; reload the page."); }
      return response.json();
    }).then(function (answer) {
      say(box, "Sign the message in your wallet…");
      form.elements.message.value = answer.message;
      return wallet().request({ method: "personal_sign", params: [utf8Hex(answer.message), address] });
    }).then(function (signature) {
      form.elements.signature.value = signature;
      say(box, "Signing in…");
      form.submit();
    }).catch(function (error) {
      if (error && error.code === "wrong_chain") { switchButton.hidden = false; }
      say(box, explain(error), true);
    });
  }

  function send(transaction) {
    return wallet().request({ method: "eth_sendTransaction", params: [transaction] });
  }

  // Top-up: send approve then deposit, then let the status partial follow the deposit.
  function topUp(box) {
    var transactions = JSON.parse(box.getAttribute("data-transactions"));
    var retry = box.querySelector("[data-wallet-retry]");
    retry.hidden = true;
    requireChain(box.getAttribute("data-chain-id")).then(function () {
      say(box, "Confirm the approval in your wallet (1 of 2)…");
      return send(transactions[0]);
    }).then(function () {
      say(box, "Confirm the deposit in your wallet (2 of 2)…");
      return send(transactions[1]);
    }).then(function (txHash) {
      say(box, "Deposit sent.");
      return htmx.ajax("POST", box.getAttribute("data-status-url"), {
        source: box, target: box, swap: "outerHTML", values: { txHash: txHash },
        headers: { "X-CSRF-Token": csrfToken() }
      });
    }).catch(function (error) {
      retry.hidden = false;
      say(box, explain(error), true);
    });
  }

  // Withdrawal: send the vault call that redeems the claim, then follow its status.
  function redeem(button) {
    var box = button.parentElement;
    var transaction = JSON.parse(button.getAttribute("data-transaction"));
    button.disabled = true;
    requireChain(parseInt(transaction.chainId, 16)).then(function () {
      say(box, "Confirm the redeem transaction in your wallet…");
      return send(transaction);
    }).then(function (txHash) {
      return htmx.ajax("GET", button.getAttribute("data-status-url") + "?tx=" + encodeURIComponent(txHash), {
        source: box, target: box, swap: "outerHTML"
      });
    }).catch(function (error) {
      button.disabled = false;
      say(box, explain(error), true);
    });
  }

  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent).then(done, function () { select(source); });
    } else {
      select(source);
    }
  }

  function select(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest("[data-wallet-signin], [data-wallet-switch], [data-wallet-retry], " +
      "[data-wallet-redeem], [data-copy]");
    if (!target) { return; }
    if (target.hasAttribute("data-wallet-signin")) {
      signIn(target.closest("[data-chain-id]"));
    } else if (target.hasAttribute("data-wallet-switch")) {
      var box = target.closest("[data-chain-id]");
      Promise.resolve().then(function () { return switchChain(box.getAttribute("data-chain-id")); })
        .then(function () { return signIn(box); })
        .catch(function (error) { say(box, explain(error), true); });
    } else if (target.hasAttribute("data-wallet-retry")) {
      topUp(target.closest("[data-wallet-topup]"));
    } else if (target.hasAttribute("data-wallet-redeem")) {
      redeem(target);
    } else {
      copy(target);
    }
  });

  // Flows the server starts by returning a fragment: a prepared top-up, a freshly issued withdrawal.
  function within(root, selector) {
    var found = Array.prototype.slice.call(root.querySelectorAll(selector));
    return root.matches(selector) ? [root].concat(found) : found;
  }

  function start(root) {
    within(root, "[data-wallet-topup]").forEach(topUp);
    within(root, "[data-wallet-redeem][data-autorun]").forEach(function (button) {
      button.removeAttribute("data-autorun");
      redeem(button);
    });
  }

  document.addEventListener("htmx:load", function (event) { start(event.detail.elt); });
}());
