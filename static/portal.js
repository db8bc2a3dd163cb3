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
  // (templates/portal/_busy.html) disable its submit button and show its busy note. A money form whose amount is
  // more than it can move (its .available line) is refused here, before anything is sent.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    if (elt.tagName === "FORM" && overLimit(elt)) {
      event.preventDefault();
      return;
    }
    elt.setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    event.detail.elt.removeAttribute("aria-busy");
  });

  // What the server will refuse, said before the form is sent (the server checks it again): a field that must
  // contain a text (data-must-contain: a message's {nonce}), and lines of which one must be among another field's
  // lines when that field has any (data-among: a quiz's answers among its choices), a last day not before the
  // first (data-not-before: a download's range, which would otherwise answer with another page). The browser then
  // refuses to submit, as for a required field, and says why beside the field.
  function lines(text) {
    return text.split("\n").map(function (line) { return line.trim().toLowerCase(); })
      .filter(function (line) { return line; });
  }

  function checkField(field) {
    var problem = "";
    var needed = field.getAttribute("data-must-contain");
    var amongName = field.getAttribute("data-among");
    var first = document.getElementById(field.getAttribute("data-not-before") || "");
    if (first && first.value && field.value && field.value < first.value) {
      problem = "The last day is before the first.";
    } else if (needed && field.value.trim() && field.value.indexOf(needed) < 0) {
      problem = "It must contain " + needed + ".";
    } else if (amongName && field.form && field.form.elements[amongName]) {
      var choices = lines(field.form.elements[amongName].value);
      var given = lines(field.value);
      if (choices.length && given.length && !given.some(function (line) { return choices.indexOf(line) >= 0; })) {
        problem = "One of the accepted answers must be among the choices.";
      }
    }
    field.setCustomValidity(problem);
    return problem;
  }

  document.addEventListener("input", function (event) {
    var form = event.target.form;
    if (!form) { return; }
    within(form, "[data-must-contain], [data-among], [data-not-before]").forEach(checkField);
  });
  document.addEventListener("submit", function (event) {
    var checked = within(event.target, "[data-must-contain], [data-among], [data-not-before]");
    if (checked.map(checkField).some(function (problem) { return problem; })) {
      event.preventDefault();
      event.target.reportValidity();
    }
  }, true);

  // The country picker over a plain <select multiple> (which works alone without JavaScript): a search that
  // hides the countries it does not match, a click that ticks or unticks one country (no Ctrl needed), the
  // regions' shortcuts that pick their countries at once (or drop them when all are picked), and what is chosen.
  function pickerParts(picker) {
    return { picker: picker, select: document.getElementById(picker.getAttribute("data-picker")) };
  }

  function showChosen(parts) {
    var chosen = Array.prototype.filter.call(parts.select.options, function (option) { return option.selected; });
    var codes = chosen.map(function (option) { return option.value; });
    parts.picker.querySelector("[data-picker-chosen]").textContent = chosen.length ?
      "Chosen: " + chosen.map(function (option) { return option.textContent.trim(); }).join(", ") : "None chosen.";
    within(parts.picker, "[data-picker-region]").forEach(function (button) {
      var region = button.getAttribute("data-picker-region").split(" ");
      button.setAttribute("aria-pressed", String(region.every(function (code) { return codes.indexOf(code) >= 0; })));
    });
  }

  function startPicker(picker) {
    var parts = pickerParts(picker);
    if (!parts.select || picker.hasAttribute("data-picker-ready")) { return; }
    picker.setAttribute("data-picker-ready", "");
    picker.hidden = false;
    showChosen(parts);
  }

  document.addEventListener("input", function (event) {
    var picker = event.target.closest("[data-picker]");
    if (!picker || !event.target.hasAttribute("data-picker-search")) { return; }
    var wanted = event.target.value.trim().toLowerCase();
    Array.prototype.forEach.call(pickerParts(picker).select.options, function (option) {
      option.hidden = wanted !== "" && option.textContent.toLowerCase().indexOf(wanted) < 0;
    });
  });

  document.addEventListener("mousedown", function (event) {
    var option = event.target.closest("select[multiple] option");
    var picker = option && document.querySelector("[data-picker='" + option.parentNode.id + "']");
    if (!picker) { return; }
    event.preventDefault();
    option.selected = !option.selected;
    showChosen(pickerParts(picker));
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-picker-region]");
    if (!button) { return; }
    var parts = pickerParts(button.closest("[data-picker]"));
    var region = button.getAttribute("data-picker-region").split(" ");
    var pick = button.getAttribute("aria-pressed") !== "true";
    Array.prototype.forEach.call(parts.select.options, function (option) {
      if (region.indexOf(option.value) >= 0) { option.selected = pick; }
    });
    showChosen(parts);
  });

  document.addEventListener("change", function (event) {
    var picker = event.target.id && document.querySelector("[data-picker='" + event.target.id + "']");
    if (picker) { showChosen(pickerParts(picker)); }
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

  // The custom errors of the vault and its tokens (contracts/build), by selector, as sentences; ``args`` are the
  // error's 32-byte arguments and ``symbol`` the token the transaction moves.
  var CONTRACT_ERRORS = {
    "0xe450d38c": function (args, symbol) {
      return "Your wallet holds " + amount(args[1], symbol) + ", less than the " + amount(args[2], symbol) +
        " this transaction moves.";
    },
    "0xfb8f41b2": function (args, symbol) {
      return "The vault may take only " + amount(args[1], symbol) + " from your wallet, less than the " +
        amount(args[2], symbol) + " this transaction moves: send the approval again.";
    },
    "0xd0fd396c": function () { return "This claim has been redeemed already."; },
    "0xf5f3b230": function () { return "The claim's deadline has passed: its amount goes back to the balance."; },
    "0xe90aded4": function () { return "This claim has been used already."; },
    "0xe74c68bb": function () { return "The vault does not accept adnet's signature now; try again later."; },
    "0xd93c0665": function () { return "The vault is paused; try again later."; },
    "0x118cdaa7": function () { return "Only the vault's owner may send this transaction."; },
    "0xbf16aab6": function () { return "The vault does not take this token."; },
    "0x1f2a2005": function () { return "The amount is zero."; }
  };

  // A smallest-unit amount (a BigInt) as a decimal string with its token.
  function amount(value, symbol) {
    var digits = value.toString().padStart(19, "0");
    var whole = digits.slice(0, -18).replace(/^0+(?=\d)/, "");
    var fraction = digits.slice(-18).replace(/0+$/, "");
    return whole + (fraction ? "." + fraction : "") + (symbol ? " " + symbol : "");
  }

  // The sentence for a contract's custom error found in what the wallet reported (its message or data), if any.
  function contractError(error, symbol) {
    var text = [error && error.message, error && JSON.stringify(error.data || "")].join(" ");
    var pattern = /0x([0-9a-fA-F]{8})((?:[0-9a-fA-F]{64})*)/g;
    var match, decode;
    while ((match = pattern.exec(text)) !== null) {
      decode = CONTRACT_ERRORS["0x" + match[1].toLowerCase()];
      if (decode) {
        return decode((match[2].match(/.{64}/g) || []).map(function (word) { return BigInt("0x" + word); }), symbol);
      }
    }
    return null;
  }

  function explain(error, symbol) {
    if (error && error.code === REJECTED) { return "You declined the request in your wallet."; }
    if (error && error.code === "no_wallet") { return error.message; }
    if (error && error.code === "wrong_chain") { return error.message; }
    var sentence = contractError(error, symbol);
    if (sentence) { return "The transaction would fail: " + sentence; }
    return "The wallet reported an error: " + ((error && error.message) || String(error));
  }

  // An amount written as a decimal string, in the smallest unit (18 decimals); null when it is not one.
  function units(text) {
    var match = /^\s*(\d*)(?:\.(\d{0,18}))?\s*$/.exec(text || "");
    if (!match || (match[1] === "" && !match[2])) { return null; }
    return BigInt(match[1] || "0") * (BigInt(10) ** BigInt(18)) + BigInt((match[2] || "").padEnd(18, "0"));
  }

  // The line of a money form's .available for the token it moves (its token or direction select, if any).
  function availableLine(form) {
    var select = form.querySelector("select[name=token], select[name=from]");
    var lines = Array.prototype.slice.call(form.querySelectorAll(".available [data-token]"));
    return lines.filter(function (line) {
      return !select || line.getAttribute("data-token") === select.value;
    })[0] || null;
  }

  function showAvailable(form) {
    var current = availableLine(form);
    form.querySelectorAll(".available [data-token]").forEach(function (line) { line.hidden = line !== current; });
  }

  function fieldError(form, text) {
    var input = form.querySelector("input[name=amount]");
    var id = form.id.replace(/-form$/, "") + "-error";
    var message = document.getElementById(id);
    if (!message) {
      message = document.createElement("p");
      message.id = id;
      message.className = "error";
      message.setAttribute("role", "alert");
      form.insertBefore(message, form.querySelector("button[type=submit]"));
    }
    message.textContent = text;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", id);
    input.focus();
  }

  function overLimit(form) {
    var line = availableLine(form);
    var input = form.querySelector("input[name=amount]");
    if (!line || !input || !line.hasAttribute("data-max")) { return false; }
    var amount = units(input.value);
    if (amount === null || amount <= units(line.getAttribute("data-max"))) { return false; }
    fieldError(form, line.getAttribute("data-over"));
    return true;
  }

  function fillMax(button) {
    var form = button.closest("form");
    var line = availableLine(form);
    var input = document.getElementById(button.getAttribute("data-max-for"));
    if (!line || !line.hasAttribute("data-max")) { return; }
    input.value = line.getAttribute("data-max");
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.focus();
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
    var messageUrl = box.getAttribute("data-message-url");
    var switchButton = box.querySelector("[data-wallet-switch]");
    var form = box.querySelector("#signin-form");
    var button = box.querySelector("[data-wallet-signin]");
    var address;
    switchButton.hidden = true;
    button.disabled = true;
    box.setAttribute("aria-busy", "true");
    say(box, "Asking your wallet for its address…");
    return Promise.resolve().then(function () {
      return wallet().request({ method: "eth_requestAccounts" });
    }).then(function (accounts) {
      address = accounts[0];
      return requireChain(chainId);
    }).then(function () {
      say(box, "Preparing the sign-in message…");
      var body = new URLSearchParams({ address: address, csrf_token: csrfToken() });
      return fetch(messageUrl, { method: "POST", body: body, credentials: "same-origin" });
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
      button.disabled = false;
      box.removeAttribute("aria-busy");
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
      say(box, explain(error, "G$"), true);
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
      say(box, explain(error, button.getAttribute("data-token")), true);
    });
  }

  // A Copy button copies the text of the element it names and says "Copied" (or, where the browser refuses the
  // clipboard, selects the text for the person to copy, and says so).
  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var said = function (text) {
      button.textContent = text;
      window.setTimeout(function () { button.textContent = "Copy"; }, 4000);
    };
    var fallback = function () {
      select(source);
      said(document.execCommand && document.execCommand("copy") ? "Copied" : "Selected: press Ctrl+C");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent.trim()).then(function () { said("Copied"); }, fallback);
    } else {
      fallback();
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
      "[data-wallet-redeem], [data-copy], [data-max-for]");
    if (!target) { return; }
    if (target.hasAttribute("data-max-for")) {
      fillMax(target);
    } else if (target.hasAttribute("data-wallet-signin")) {
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

  // The schedule's week grid over plain checkboxes (name "schedule", value "mon-9"): a drag with the mouse sets
  // every cell it crosses as its first cell became; the arrow keys move between cells (one tab stop for the grid),
  // Shift with an arrow sets the cell it reaches as the one it leaves; shortcuts set whole days and hours.
  var weekDrag = null;
  function weekCells(table) { return Array.prototype.slice.call(table.querySelectorAll("input[name=schedule]")); }
  function startWeek(table) {
    if (table.hasAttribute("data-week-ready")) { return; }
    table.setAttribute("data-week-ready", "");
    var cells = weekCells(table);
    var current = cells.filter(function (cell) { return cell.checked; })[0] || cells[0];
    cells.forEach(function (cell) { cell.tabIndex = cell === current ? 0 : -1; });
    var shortcuts = table.closest("fieldset").querySelector("[data-week-shortcuts]");
    if (shortcuts) { shortcuts.hidden = false; }
  }
  document.addEventListener("mousedown", function (event) {
    var cell = event.target.closest && event.target.closest("[data-week] input");
    if (!cell || event.button !== 0) { return; }
    weekDrag = { first: cell, on: !cell.checked, moved: false };
  });
  document.addEventListener("mouseover", function (event) {
    var cell = weekDrag && event.target.closest && event.target.closest("[data-week] input");
    if (!cell || cell.closest("[data-week]") !== weekDrag.first.closest("[data-week]")) { return; }
    weekDrag.moved = true;
    weekDrag.first.checked = weekDrag.on;
    cell.checked = weekDrag.on;
  });
  document.addEventListener("mouseup", function () {
    if (weekDrag) { setTimeout(function () { weekDrag = null; }, 0); }
  });
  document.addEventListener("click", function (event) {
    var cell = event.target.closest && event.target.closest("[data-week] input");
    if (cell && weekDrag && weekDrag.moved) { event.preventDefault(); }  // the drag already set it
  });
  document.addEventListener("keydown", function (event) {
    var cell = event.target.closest && event.target.closest("[data-week] input");
    var moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -24, ArrowDown: 24, Home: 0, End: 0 };
    if (!cell || !(event.key in moves)) { return; }
    var cells = weekCells(cell.closest("[data-week]"));
    var at = cells.indexOf(cell);
    var to = event.key === "Home" ? at - at % 24 : event.key === "End" ? at - at % 24 + 23 : at + moves[event.key];
    if (to < 0 || to >= cells.length) { return; }
    event.preventDefault();
    if (event.shiftKey) { cells[to].checked = cell.checked; }
    cells[to].focus();
  });
  document.addEventListener("focusin", function (event) {
    var cell = event.target.closest && event.target.closest("[data-week] input");
    if (!cell) { return; }
    weekCells(cell.closest("[data-week]")).forEach(function (other) { other.tabIndex = other === cell ? 0 : -1; });
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-week-set]");
    if (!button) { return; }
    var days = button.getAttribute("data-week-set").split(" ");
    var range = button.getAttribute("data-week-hours").split("-").map(Number);
    weekCells(button.closest("fieldset").querySelector("[data-week]")).forEach(function (cell) {
      var parts = cell.value.split("-");
      var hour = Number(parts[1]);
      cell.checked = days.indexOf(parts[0]) >= 0 && hour >= range[0] && hour < range[1];
    });
  });

  // Flows the server starts by returning a fragment: a prepared top-up, a freshly issued withdrawal.
  function within(root, selector) {
    var found = Array.prototype.slice.call(root.querySelectorAll(selector));
    return root.matches(selector) ? [root].concat(found) : found;
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches("select[name=token], select[name=from]") && event.target.form) {
      showAvailable(event.target.form);
    }
  });

  function start(root) {
    within(root, "[data-picker]").forEach(startPicker);
    within(root, "[data-week]").forEach(startWeek);
    within(root, ".available").forEach(function (line) { showAvailable(line.closest("form")); });
    within(root, "[data-wallet-topup]").forEach(topUp);
    within(root, "[data-wallet-redeem][data-autorun]").forEach(function (button) {
      button.removeAttribute("data-autorun");
      redeem(button);
    });
  }

  document.addEventListener("htmx:load", function (event) { start(event.detail.elt); });
}());
