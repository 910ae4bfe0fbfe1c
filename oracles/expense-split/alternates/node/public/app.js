'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { slug: null, token: null, members: [] };

  function money(cents) {
    const n = Number(cents);
    const sign = n < 0 ? '-' : '';
    const a = Math.abs(n);
    const cc = a % 100;
    return sign + Math.floor(a / 100) + '.' + (cc < 10 ? '0' : '') + cc;
  }
  function toCents(text) {
    const t = String(text).trim();
    const m = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(t);
    if (!m) return t === '' ? null : t; // let the API explain what is wrong
    const frac = m[2] ? (m[2].length === 1 ? m[2] + '0' : m[2]) : '00';
    return Number(m[1]) * 100 + Number(frac);
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) for (const k of Object.keys(attrs)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setMessage(text) { $('message').textContent = text || ''; }

  async function api(method, path, body, noAuth) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (!noAuth && state.token) headers.Authorization = 'Bearer ' + state.token;
    let res;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      throw new Error('The service cannot be reached.');
    }
    if (res.status === 204) return null;
    let data = null;
    try { data = await res.json(); } catch (_) { data = null; }
    if (!res.ok) throw new Error((data && data.message) || ('Request failed (' + res.status + ')'));
    return data;
  }
  const P = () => '/api/projects/' + encodeURIComponent(state.slug);
  const nameOf = (id) => { const m = state.members.find((x) => x.id === id); return m ? m.name : '#' + id; };

  function renderMembers(members) {
    state.members = members;
    const list = $('member-list');
    list.replaceChildren(...members.map((m) => {
      const li = el('li', { 'data-testid': 'member-item', 'data-member-id': String(m.id), title: 'weight ' + m.weight + (m.active ? '' : ', inactive') }, m.name);
      if (!m.active) li.className = 'muted';
      return li;
    }));
    const active = members.filter((m) => m.active);
    const payer = $('new-bill-payer');
    const prevPayer = payer.value;
    payer.replaceChildren(...active.map((m) => el('option', { value: String(m.id) }, m.name)));
    if (active.some((m) => String(m.id) === prevPayer)) payer.value = prevPayer;
    const box = $('new-bill-owers');
    const checked = new Set(Array.from(box.querySelectorAll('input:checked')).map((i) => i.value));
    box.replaceChildren(...active.map((m) => {
      const lab = el('label', { class: 'ower' });
      const cb = el('input', { type: 'checkbox', 'data-testid': 'new-bill-ower', value: String(m.id) });
      cb.checked = checked.has(String(m.id));
      lab.append(cb, document.createTextNode(' '), el('span', null, m.name));
      return lab;
    }));
  }
  function renderBills(bills) {
    $('bill-list').replaceChildren(...bills.map((b) => {
      const li = el('li', { 'data-testid': 'bill-item', 'data-bill-id': String(b.id) });
      const del = el('button', { type: 'button', 'data-testid': 'delete-bill' }, 'Delete');
      del.addEventListener('click', () => deleteBill(b.id));
      li.append(
        el('span', { class: 'muted' }, b.date + ' '),
        el('span', { 'data-testid': 'bill-description' }, b.description),
        document.createTextNode(' — '),
        el('span', { 'data-testid': 'bill-amount' }, money(b.amount_cents)),
        el('span', { class: 'muted' }, ' paid by ' + nameOf(b.payer_id) + ' '),
        del);
      return li;
    }));
  }
  function renderBalances(items) {
    $('balance-list').replaceChildren(...items.map((b) => {
      const li = el('li', { 'data-testid': 'balance-item', 'data-member-id': String(b.member_id) });
      const amt = el('span', { 'data-testid': 'balance-amount', class: b.balance_cents < 0 ? 'neg' : 'pos' }, money(b.balance_cents));
      li.append(el('span', { 'data-testid': 'balance-name' }, b.name), document.createTextNode(': '), amt);
      return li;
    }));
  }
  function renderSettlements(items) {
    $('settlement-list').replaceChildren(...items.map((t) => {
      const li = el('li', { 'data-testid': 'settlement-item' });
      li.append(el('span', { 'data-testid': 'settlement-from' }, nameOf(t.from_id)), document.createTextNode(' pays '),
        el('span', { 'data-testid': 'settlement-to' }, nameOf(t.to_id)), document.createTextNode(' '),
        el('span', { 'data-testid': 'settlement-amount' }, money(t.amount_cents)));
      return li;
    }));
  }
  async function refresh() {
    const [members, bills, balances, settlements] = await Promise.all([
      api('GET', P() + '/members'), api('GET', P() + '/bills'), api('GET', P() + '/balances'), api('GET', P() + '/settlements')]);
    renderMembers(members.items);
    renderBills(bills.items);
    renderBalances(balances.items);
    renderSettlements(settlements.items);
  }

  let busy = Promise.resolve();
  function serial(fn) { busy = busy.then(fn, fn); return busy; }

  $('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const slug = $('login-slug').value;
    const password = $('login-password').value;
    serial(async () => {
      try {
        const tok = await api('POST', '/api/projects/' + encodeURIComponent(slug) + '/token', { password }, true);
        const prev = { slug: state.slug, token: state.token };
        state.slug = slug; state.token = tok.token;
        try {
          const p = await api('GET', P());
          state.members = [];
          $('new-bill-owers').replaceChildren();
          $('project-name').textContent = p.name;
          await refresh();
          $('project').hidden = false;
          setMessage('');
        } catch (e) {
          state.slug = prev.slug; state.token = prev.token;
          throw e;
        }
      } catch (e) {
        setMessage(e.message);
      }
    });
  });

  $('member-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    serial(async () => {
      if (!state.token) return;
      const body = { name: $('new-member-name').value };
      const w = $('new-member-weight').value.trim();
      if (w !== '') body.weight = /^-?\d+$/.test(w) ? Number(w) : w;
      try {
        await api('POST', P() + '/members', body);
        $('new-member-name').value = '';
        $('new-member-weight').value = '';
        await refresh();
        setMessage('');
      } catch (e) { setMessage(e.message); }
    });
  });

  $('bill-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    serial(async () => {
      if (!state.token) return;
      const payer = $('new-bill-payer').value;
      const owers = Array.from($('new-bill-owers').querySelectorAll('input[type=checkbox]:checked')).map((c) => Number(c.value));
      const body = {
        payer_id: payer === '' ? null : Number(payer),
        amount_cents: toCents($('new-bill-amount').value),
        date: $('new-bill-date').value.trim(),
        description: $('new-bill-description').value,
        owers,
      };
      try {
        await api('POST', P() + '/bills', body);
        $('new-bill-amount').value = '';
        $('new-bill-date').value = '';
        $('new-bill-description').value = '';
        $('new-bill-owers').querySelectorAll('input[type=checkbox]').forEach((c) => { c.checked = false; });
        await refresh();
        setMessage('');
      } catch (e) { setMessage(e.message); }
    });
  });

  function deleteBill(id) {
    serial(async () => {
      try {
        await api('DELETE', P() + '/bills/' + id);
        await refresh();
        setMessage('');
      } catch (e) { setMessage(e.message); }
    });
  }
})();
