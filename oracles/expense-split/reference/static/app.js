"use strict";
let slug = null;
let token = null;
const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const headers = body === undefined ? {} : {"Content-Type": "application/json"};
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  const data = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new Error(data && data.message ? data.message : `HTTP ${response.status}`);
  return data;
}

function show(message) { $("message").textContent = message || ""; }

function money(cents) {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

function cents(text) {
  const match = /^\s*(\d+)(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return NaN;
  return Number(match[1]) * 100 + Number((match[2] || "0").padEnd(2, "0"));
}

function item(testid, ...parts) {
  const li = document.createElement("li");
  li.dataset.testid = testid;
  li.append(...parts);
  return li;
}

function span(testid, text) {
  const element = document.createElement("span");
  element.dataset.testid = testid;
  element.textContent = text;
  return element;
}

const base = () => `/api/projects/${encodeURIComponent(slug)}`;

async function refresh() {
  if (!token) return;
  const [members, bills, balances, plan] = await Promise.all([
    api("GET", `${base()}/members`), api("GET", `${base()}/bills`),
    api("GET", `${base()}/balances`), api("GET", `${base()}/settlements`),
  ]);
  const names = new Map(members.items.map((m) => [m.id, m.name]));
  $("member-list").replaceChildren(...members.items.map((m) => {
    const li = item("member-item");
    li.textContent = m.active ? m.name : `${m.name} (inactive)`;
    return li;
  }));
  const active = members.items.filter((m) => m.active);
  $("new-bill-payer").replaceChildren(...active.map((m) => {
    const option = document.createElement("option");
    option.value = String(m.id);
    option.textContent = m.name;
    return option;
  }));
  const legend = document.createElement("legend");
  legend.textContent = "For whom";
  $("new-bill-owers").replaceChildren(legend, ...active.map((m) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = String(m.id);
    box.dataset.testid = "new-bill-ower";
    label.append(box, " ", m.name);
    return label;
  }));
  $("bill-list").replaceChildren(...bills.items.map((b) => {
    const remove = document.createElement("button");
    remove.type = "button";
    remove.dataset.testid = "delete-bill";
    remove.textContent = "Delete";
    remove.addEventListener("click", () => act(() => api("DELETE", `${base()}/bills/${b.id}`)));
    return item("bill-item", `${b.date} `, span("bill-description", b.description), " ", span("bill-amount", money(b.amount_cents)),
      ` paid by ${names.get(b.payer_id) || "?"} `, remove);
  }));
  $("balance-list").replaceChildren(...balances.items.map((b) =>
    item("balance-item", span("balance-name", b.name), ": ", span("balance-amount", money(b.balance_cents)))));
  $("settlement-list").replaceChildren(...plan.items.map((t) =>
    item("settlement-item", span("settlement-from", names.get(t.from_id) || "?"), " pays ",
      span("settlement-to", names.get(t.to_id) || "?"), " ", span("settlement-amount", money(t.amount_cents)))));
}

async function act(action, form) {
  try {
    await action();
    show("");
    if (form) form.reset();
  } catch (err) { show(err.message); }
  try { await refresh(); } catch (err) { show(err.message); }
}

$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const wanted = $("login-slug").value;
  try {
    const answer = await api("POST", `/api/projects/${encodeURIComponent(wanted)}/token`, {password: $("login-password").value});
    slug = wanted;
    token = answer.token;
    const project = await api("GET", base());
    $("project-name").textContent = project.name;
    show("");
    await refresh();
  } catch (err) { show(err.message); }
});

$("member-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const weight = $("new-member-weight").value.trim();
  const body = {name: $("new-member-name").value};
  if (weight !== "") body.weight = Number.isInteger(Number(weight)) ? Number(weight) : weight;
  act(() => api("POST", `${base()}/members`, body), $("member-form"));
});

$("bill-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const owers = Array.from(document.querySelectorAll("[data-testid='new-bill-ower']:checked")).map((box) => Number(box.value));
  const amount = cents($("new-bill-amount").value);
  act(() => api("POST", `${base()}/bills`, {
    payer_id: Number($("new-bill-payer").value),
    amount_cents: Number.isNaN(amount) ? $("new-bill-amount").value : amount,
    date: $("new-bill-date").value,
    description: $("new-bill-description").value,
    owers,
  }), $("bill-form"));
});
