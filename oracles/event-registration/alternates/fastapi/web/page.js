"use strict";
const state = { events: [], current: null, attendees: [] };
const el = (id) => document.getElementById(id);

async function call(method, path, payload) {
  const init = { method };
  if (payload !== undefined) {
    init.headers = { "Content-Type": "application/json" };
    init.body = JSON.stringify(payload);
  }
  const res = await fetch(path, init);
  let data = null;
  if (res.status !== 204) {
    try { data = await res.json(); } catch (e) { data = null; }
  }
  if (!res.ok) {
    const err = new Error((data && data.message) || ("HTTP " + res.status));
    err.data = data;
    throw err;
  }
  return data;
}

function say(text) { el("msg").textContent = text; }

function drawEvents() {
  const box = el("events");
  box.replaceChildren(...state.events.map((ev) => {
    const row = document.createElement("div");
    row.setAttribute("role", "listitem");
    row.dataset.testid = "event-item";
    row.dataset.id = ev.id;
    if (state.current === ev.id) row.classList.add("current");
    const left = document.createElement("span");
    const t = document.createElement("strong");
    t.dataset.testid = "event-title";
    t.textContent = ev.title;
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = " " + ev.starts_at;
    left.append(t, when);
    const seats = document.createElement("span");
    seats.dataset.testid = "event-seats";
    seats.textContent = `${ev.seats_left} seats left`;
    row.append(left, seats);
    row.addEventListener("click", () => choose(ev.id));
    return row;
  }));
  const cur = state.events.find((e) => e.id === state.current);
  el("current").textContent = cur ? cur.title : "";
}

function drawAttendees() {
  el("attendees").replaceChildren(...state.attendees.map((a) => {
    const li = document.createElement("li");
    li.dataset.testid = "attendee-item";
    li.textContent = a.name;
    return li;
  }));
}

async function refreshEvents() {
  state.events = (await call("GET", "/api/events")).items;
  drawEvents();
}

async function refreshAttendees() {
  const id = state.current;
  if (id === null) { state.attendees = []; drawAttendees(); return; }
  const data = await call("GET", `/api/events/${id}/registrations`);
  if (state.current === id) { state.attendees = data.items; drawAttendees(); }
}

async function choose(id) {
  state.current = id;
  state.attendees = [];
  drawEvents();
  drawAttendees();
  try { await refreshAttendees(); } catch (e) { say(e.message); }
}

function capacityFrom(text) {
  return /^\s*[+-]?\d+\s*$/.test(text) ? Number(text.trim()) : text;
}

async function createEvent() {
  say("");
  try {
    await call("POST", "/api/events", {
      title: el("ev-title").value,
      starts_at: el("ev-starts").value,
      capacity: capacityFrom(el("ev-capacity").value),
    });
    for (const id of ["ev-title", "ev-starts", "ev-capacity"]) el(id).value = "";
    await refreshEvents();
    say("");
  } catch (e) { say(e.message); }
}

async function register() {
  say("");
  if (state.current === null) { say("Choose an event first."); return; }
  try {
    await call("POST", `/api/events/${state.current}/registrations`, {
      name: el("att-name").value,
      email: el("att-email").value,
    });
    el("att-name").value = "";
    el("att-email").value = "";
    await Promise.all([refreshEvents(), refreshAttendees()]);
    say("");
  } catch (e) {
    say(e.message);
    refreshEvents().catch(() => {});
  }
}

el("ev-create").addEventListener("click", createEvent);
el("att-register").addEventListener("click", register);
for (const id of ["ev-title", "ev-starts", "ev-capacity"]) {
  el(id).addEventListener("keydown", (e) => { if (e.key === "Enter") createEvent(); });
}
for (const id of ["att-name", "att-email"]) {
  el(id).addEventListener("keydown", (e) => { if (e.key === "Enter") register(); });
}
refreshEvents().catch((e) => say(e.message));
