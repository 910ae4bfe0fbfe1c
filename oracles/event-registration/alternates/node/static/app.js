'use strict';
// Page logic: lists events, creates events, registers attendees; no reload needed.
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { events: [], selectedId: null };

  function setMessage(text) {
    $('message').textContent = text || '';
  }

  async function api(method, url, body) {
    const opts = { method, headers: {} };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(url, opts);
    } catch (e) {
      return { ok: false, message: 'Network error: ' + e.message };
    }
    let data = null;
    if (res.status !== 204) {
      try { data = await res.json(); } catch (e) { data = null; }
    }
    if (!res.ok) {
      return { ok: false, message: (data && data.message) || ('Request failed (' + res.status + ')') };
    }
    return { ok: true, data };
  }

  function renderEvents() {
    const list = $('event-list');
    list.textContent = '';
    for (const ev of state.events) {
      const li = document.createElement('li');
      li.setAttribute('data-testid', 'event-item');
      li.dataset.id = String(ev.id);
      if (ev.id === state.selectedId) li.classList.add('selected');
      const title = document.createElement('span');
      title.setAttribute('data-testid', 'event-title');
      title.textContent = ev.title;
      const starts = document.createElement('span');
      starts.className = 'starts';
      starts.textContent = ev.starts_at;
      const seats = document.createElement('span');
      seats.setAttribute('data-testid', 'event-seats');
      seats.className = 'seats';
      seats.textContent = ev.seats_left + ' seats left';
      li.append(title, starts, seats);
      li.addEventListener('click', () => selectEvent(ev.id));
      list.appendChild(li);
    }
    const sel = state.events.find((e) => e.id === state.selectedId);
    $('selected-event').textContent = sel ? sel.title : '';
  }

  async function loadEvents() {
    const r = await api('GET', '/api/events');
    if (!r.ok) return r;
    state.events = r.data.items;
    renderEvents();
    return r;
  }

  function renderAttendees(items) {
    const list = $('attendee-list');
    list.textContent = '';
    for (const reg of items) {
      const li = document.createElement('li');
      li.setAttribute('data-testid', 'attendee-item');
      li.dataset.id = String(reg.id);
      li.textContent = reg.name;
      li.title = reg.email;
      list.appendChild(li);
    }
  }

  async function loadAttendees() {
    if (state.selectedId === null) {
      renderAttendees([]);
      return { ok: true };
    }
    const id = state.selectedId;
    const r = await api('GET', '/api/events/' + id + '/registrations');
    if (id !== state.selectedId) return { ok: true }; // selection changed meanwhile
    if (!r.ok) return r;
    renderAttendees(r.data.items);
    return r;
  }

  async function selectEvent(id) {
    state.selectedId = id;
    renderEvents();
    renderAttendees([]);
    const r = await loadAttendees();
    setMessage(r.ok ? '' : r.message);
  }

  function capacityValue(text) {
    const t = text.trim();
    return /^[+-]?\d+$/.test(t) ? Number(t) : text;
  }

  $('new-event-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = {
      title: $('new-event-title').value,
      starts_at: $('new-event-starts').value,
      capacity: capacityValue($('new-event-capacity').value),
    };
    const r = await api('POST', '/api/events', body);
    if (!r.ok) {
      setMessage(r.message);
      return;
    }
    $('new-event-title').value = '';
    $('new-event-starts').value = '';
    $('new-event-capacity').value = '';
    const l = await loadEvents();
    setMessage(l.ok ? '' : l.message);
  });

  $('register-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (state.selectedId === null) {
      setMessage('Select an event first.');
      return;
    }
    const body = { name: $('attendee-name').value, email: $('attendee-email').value };
    const r = await api('POST', '/api/events/' + state.selectedId + '/registrations', body);
    if (r.ok) {
      $('attendee-name').value = '';
      $('attendee-email').value = '';
    }
    await Promise.all([loadEvents(), loadAttendees()]);
    setMessage(r.ok ? '' : r.message);
  });

  loadEvents().then((r) => { if (!r.ok) setMessage(r.message); });
})();
