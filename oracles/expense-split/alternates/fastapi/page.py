"""The single HTML page served at GET /. All user data is inserted with textContent, never as HTML."""

PAGE_HTML = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Expense split</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
  section { border: 1px solid #ddd; border-radius: 6px; padding: .8rem 1rem; margin: .8rem 0; }
  h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin: .2rem 0 .6rem; }
  label { margin-right: .6rem; }
  input[type=text], input[type=password], select { padding: .25rem; }
  ul { padding-left: 1.2rem; }
  li { margin: .2rem 0; }
  .amount { font-variant-numeric: tabular-nums; margin-left: .5rem; }
  .muted { color: #777; margin-left: .5rem; }
  #message { min-height: 1.2em; color: #b00020; font-weight: bold; }
  #owers label { display: inline-block; margin-right: .8rem; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Expense split</h1>

<section id="login-box">
  <h2>Open a project</h2>
  <label>Slug <input type="text" data-testid="login-slug" id="login-slug" autocomplete="off"></label>
  <label>Password <input type="password" data-testid="login-password" id="login-password"></label>
  <button type="button" data-testid="login" id="login">Open</button>
</section>

<div data-testid="message" id="message" role="status" aria-live="polite"></div>

<div id="project" hidden>
  <h2>Project: <span data-testid="project-name" id="project-name"></span></h2>

  <section>
    <h2>Members</h2>
    <ul data-testid="member-list" id="member-list"></ul>
    <label>Name <input type="text" data-testid="new-member-name" id="new-member-name" maxlength="60"></label>
    <label>Weight <input type="text" data-testid="new-member-weight" id="new-member-weight" placeholder="1" size="4"></label>
    <button type="button" data-testid="add-member" id="add-member">Add member</button>
  </section>

  <section>
    <h2>New bill</h2>
    <p>
      <label>Paid by <select data-testid="new-bill-payer" id="new-bill-payer"></select></label>
      <label>Amount <input type="text" data-testid="new-bill-amount" id="new-bill-amount" placeholder="12.50" size="10"></label>
      <label>Date <input type="text" data-testid="new-bill-date" id="new-bill-date" placeholder="YYYY-MM-DD" size="12"></label>
    </p>
    <p><label>Description <input type="text" data-testid="new-bill-description" id="new-bill-description" size="40"></label></p>
    <p>For whom: <span id="owers"></span></p>
    <button type="button" data-testid="add-bill" id="add-bill">Add bill</button>
  </section>

  <section>
    <h2>Bills</h2>
    <ul data-testid="bill-list" id="bill-list"></ul>
  </section>

  <section>
    <h2>Balances</h2>
    <ul data-testid="balance-list" id="balance-list"></ul>
  </section>

  <section>
    <h2>Settlement plan</h2>
    <ul data-testid="settlement-list" id="settlement-list"></ul>
  </section>
</div>

<script>
"use strict";
(function () {
  var state = { token: null, slug: null, members: [] };
  function $(id) { return document.getElementById(id); }

  function fmt(cents) {
    var neg = cents < 0, a = Math.abs(cents);
    var units = Math.floor(a / 100), rest = a % 100;
    return (neg ? "-" : "") + units + "." + (rest < 10 ? "0" : "") + rest;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) { for (var k in attrs) { node.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function setMessage(text) { $("message").textContent = text || ""; }

  function base() { return "/api/projects/" + encodeURIComponent(state.slug); }

  async function api(method, path, body) {
    var opts = { method: method, headers: {} };
    if (state.token) { opts.headers["Authorization"] = "Bearer " + state.token; }
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    var res;
    try { res = await fetch(path, opts); }
    catch (e) { throw new Error("The service could not be reached."); }
    var data = null;
    if (res.status !== 204) {
      try { data = await res.json(); } catch (e) { data = null; }
    }
    if (!res.ok) {
      throw new Error(data && typeof data.message === "string" ? data.message : "Request failed (" + res.status + ").");
    }
    return data;
  }

  function memberName(id) {
    for (var i = 0; i < state.members.length; i++) {
      if (state.members[i].id === id) { return state.members[i].name; }
    }
    return "#" + id;
  }

  function renderMembers() {
    var list = $("member-list");
    list.replaceChildren();
    state.members.forEach(function (m) {
      var li = el("li", { "data-testid": "member-item", "data-member-id": String(m.id),
                          title: "weight " + m.weight + (m.active ? "" : ", inactive") }, m.name);
      list.appendChild(li);
    });
    var active = state.members.filter(function (m) { return m.active; });
    var payer = $("new-bill-payer"), previous = payer.value;
    payer.replaceChildren();
    active.forEach(function (m) {
      var opt = el("option", { value: String(m.id) }, m.name);
      payer.appendChild(opt);
    });
    if (active.some(function (m) { return String(m.id) === previous; })) { payer.value = previous; }
    var owers = $("owers"), checked = {};
    owers.querySelectorAll("input[type=checkbox]").forEach(function (c) { if (c.checked) { checked[c.value] = true; } });
    owers.replaceChildren();
    active.forEach(function (m) {
      var label = el("label");
      var box = el("input", { type: "checkbox", "data-testid": "new-bill-ower", value: String(m.id) });
      box.checked = !!checked[String(m.id)];
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + m.name));
      owers.appendChild(label);
    });
  }

  function renderBills(bills) {
    var list = $("bill-list");
    list.replaceChildren();
    bills.forEach(function (b) {
      var li = el("li", { "data-testid": "bill-item", "data-bill-id": String(b.id) });
      li.appendChild(el("span", { "class": "muted" }, b.date));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", { "data-testid": "bill-description" }, b.description));
      li.appendChild(el("span", { "data-testid": "bill-amount", "class": "amount" }, fmt(b.amount_cents)));
      li.appendChild(el("span", { "class": "muted" }, "paid by " + memberName(b.payer_id)));
      li.appendChild(document.createTextNode(" "));
      var del = el("button", { type: "button", "data-testid": "delete-bill" }, "Delete");
      del.addEventListener("click", function () { deleteBill(b.id); });
      li.appendChild(del);
      list.appendChild(li);
    });
  }

  function renderBalances(items) {
    var list = $("balance-list");
    list.replaceChildren();
    items.forEach(function (it) {
      var li = el("li", { "data-testid": "balance-item", "data-member-id": String(it.member_id) });
      li.appendChild(el("span", { "data-testid": "balance-name" }, it.name));
      li.appendChild(el("span", { "data-testid": "balance-amount", "class": "amount" }, fmt(it.balance_cents)));
      if (!it.active) { li.appendChild(el("span", { "class": "muted" }, "(inactive)")); }
      list.appendChild(li);
    });
  }

  function renderSettlements(items) {
    var list = $("settlement-list");
    list.replaceChildren();
    items.forEach(function (t) {
      var li = el("li", { "data-testid": "settlement-item" });
      li.appendChild(el("span", { "data-testid": "settlement-from" }, memberName(t.from_id)));
      li.appendChild(document.createTextNode(" pays "));
      li.appendChild(el("span", { "data-testid": "settlement-to" }, memberName(t.to_id)));
      li.appendChild(el("span", { "data-testid": "settlement-amount", "class": "amount" }, fmt(t.amount_cents)));
      list.appendChild(li);
    });
  }

  async function refresh() {
    var results = await Promise.all([
      api("GET", base() + "/members"),
      api("GET", base() + "/bills"),
      api("GET", base() + "/balances"),
      api("GET", base() + "/settlements")
    ]);
    state.members = results[0].items;
    renderMembers();
    renderBills(results[1].items);
    renderBalances(results[2].items);
    renderSettlements(results[3].items);
  }

  async function run(action) {
    try { await action(); setMessage(""); }
    catch (e) { setMessage(e.message); }
  }

  function login() {
    return run(async function () {
      var slug = $("login-slug").value, password = $("login-password").value;
      var previous = { token: state.token, slug: state.slug };
      state.token = null; state.slug = slug;
      var data;
      try { data = await api("POST", base() + "/token", { password: password }); }
      catch (e) { state.token = previous.token; state.slug = previous.slug; throw e; }
      state.token = data.token;
      var project = await api("GET", base());
      $("project-name").textContent = project.name;
      state.members = [];
      $("owers").replaceChildren();
      await refresh();
      $("project").hidden = false;
    });
  }

  function addMember() {
    return run(async function () {
      var body = { name: $("new-member-name").value };
      var w = $("new-member-weight").value.trim();
      if (w !== "") { body.weight = /^[0-9]+$/.test(w) ? parseInt(w, 10) : w; }
      await api("POST", base() + "/members", body);
      $("new-member-name").value = "";
      $("new-member-weight").value = "";
      await refresh();
    });
  }

  function parseAmount(text) {
    var t = text.trim(), m = /^([0-9]+)(?:[.,]([0-9]{1,2}))?$/.exec(t);
    if (!m) { return t === "" ? null : t; }   // let the API reject what is not an amount
    var frac = m[2] || "";
    while (frac.length < 2) { frac += "0"; }
    return parseInt(m[1], 10) * 100 + parseInt(frac, 10);
  }

  function addBill() {
    return run(async function () {
      var payer = $("new-bill-payer").value;
      var owers = [];
      $("owers").querySelectorAll("input[type=checkbox]").forEach(function (c) {
        if (c.checked) { owers.push(parseInt(c.value, 10)); }
      });
      var body = {
        payer_id: payer === "" ? null : parseInt(payer, 10),
        amount_cents: parseAmount($("new-bill-amount").value),
        date: $("new-bill-date").value.trim(),
        description: $("new-bill-description").value,
        owers: owers
      };
      await api("POST", base() + "/bills", body);
      $("new-bill-amount").value = "";
      $("new-bill-date").value = "";
      $("new-bill-description").value = "";
      $("owers").querySelectorAll("input[type=checkbox]").forEach(function (c) { c.checked = false; });
      await refresh();
    });
  }

  function deleteBill(id) {
    return run(async function () {
      await api("DELETE", base() + "/bills/" + id);
      await refresh();
    });
  }

  $("login").addEventListener("click", login);
  $("add-member").addEventListener("click", addMember);
  $("add-bill").addEventListener("click", addBill);
  $("login-password").addEventListener("keydown", function (e) { if (e.key === "Enter") { login(); } });
})();
</script>
</body>
</html>
"""
