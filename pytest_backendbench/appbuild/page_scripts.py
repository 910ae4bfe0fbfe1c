"""The JavaScript the clickable sweep runs in the page (kept apart: it is data, not Python logic).

``RECORDER`` is registered to run at document start in every page of the sweep's tab: it counts
DOM changes and requests (for "did the click do anything", "has the page settled") and notes
which elements get click listeners (``addEventListener``; React-style delegation to the root is
found through the usual button/link/role selectors instead). ``CONTROLS`` lists the visible,
enabled controls of the current page with a selector that finds each again after a reload.
"""

from __future__ import annotations

SHORT_TIMER_S = 1.5
"""A click's effect may come from a timer: timers up to this delay are waited for (at most this long after the click)."""

RECORDER = r"""
(() => {
  const SHORT_TIMER_MS = 1500;  // SHORT_TIMER_S
  if (window.__bbSweep) return;
  const s = window.__bbSweep = {mutations: 0, lastChange: performance.now(), pending: 0, requests: 0, clickables: new Set()};
  const touch = () => { s.lastChange = performance.now(); };
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (this instanceof Element && /^(click|mousedown|mouseup|pointerdown|pointerup)$/.test(type)) s.clickables.add(this);
    return add.call(this, type, listener, options);
  };
  new MutationObserver(() => { s.mutations++; touch(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const fetch = window.fetch;
  if (fetch) window.fetch = function (...args) {
    s.requests++; s.pending++; touch();
    return fetch.apply(this, args).finally(() => { s.pending--; touch(); });
  };
  const later = window.setTimeout, cancel = window.clearTimeout, short = new Set();
  window.setTimeout = function (callback, delay, ...args) {
    if (typeof callback !== 'function' || !(Number(delay) <= SHORT_TIMER_MS)) return later.call(this, callback, delay, ...args);
    const id = later.call(this, (...a) => { short.delete(id); touch(); return callback(...a); }, delay, ...args);
    short.add(id);
    return id;
  };
  window.clearTimeout = function (id) { short.delete(id); return cancel.call(this, id); };
  Object.defineProperty(s, 'timers', {get: () => short.size});
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    s.requests++; s.pending++; touch();
    this.addEventListener('loadend', () => { s.pending--; touch(); });
    return send.apply(this, args);
  };
})();
"""

STATE = r"""
const s = window.__bbSweep;
const nav = performance.getEntriesByType('navigation')[0];
return {
  url: location.href,
  ready: document.readyState,
  quiet_ms: s ? performance.now() - s.lastChange : 1e9,
  pending: s ? s.pending : 0,
  timers: s ? s.timers : 0,
  mutations: s ? s.mutations : 0,
  requests: s ? s.requests : 0,
  status: nav && nav.responseStatus ? nav.responseStatus : null,
};
"""

CONTROLS = r"""
const selectors = 'a[href], button, input[type=button], input[type=submit], input[type=reset], input[type=image], summary, '
  + '[role=button], [role=link], [role=tab], [role=menuitem], [onclick]';
const marked = window.__bbSweep ? [...window.__bbSweep.clickables] : [];
const unique = (q) => { try { return document.querySelectorAll(q).length === 1; } catch (e) { return false; } };
const selectorOf = (el) => {
  if (el.id && unique('#' + CSS.escape(el.id))) return '#' + CSS.escape(el.id);
  const testid = el.getAttribute('data-testid');
  if (testid && unique(`[data-testid="${CSS.escape(testid)}"]`)) return `[data-testid="${CSS.escape(testid)}"]`;
  const parts = [];
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    if (node !== el && node.id && unique('#' + CSS.escape(node.id))) { parts.unshift('#' + CSS.escape(node.id)); break; }
    if (node === document.documentElement) { parts.unshift('html'); break; }
    let index = 1;
    for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) if (sib.tagName === node.tagName) index++;
    parts.unshift(`${node.tagName.toLowerCase()}:nth-of-type(${index})`);
  }
  return parts.join(' > ');
};
// text the page holds may be anything (lone surrogates too): only well-formed strings go back to the driver
const clean = (v) => (typeof v === 'string' ? (v.toWellFormed ? v.toWellFormed() : v) : '');
const textOf = (el) => clean((clean(el.innerText) || clean(el.value) || clean(el.getAttribute('aria-label')) || clean(el.getAttribute('title'))
  || clean(el.getAttribute('href'))).trim().replace(/\s+/g, ' ').slice(0, 80));  // a cut may split a surrogate pair
const out = [];
for (const el of new Set([...document.querySelectorAll(selectors), ...marked])) {
  if (!el.isConnected || el.disabled || el.getAttribute('aria-disabled') === 'true' || el.closest('[inert]')) continue;
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  if (box.width < 1 || box.height < 1 || style.visibility === 'hidden' || style.display === 'none') continue;
  if (el.tagName === 'A' && el.hasAttribute('href')) {
    const url = new URL(el.href, location.href);
    if (url.protocol === 'http:' || url.protocol === 'https:') { if (url.origin !== location.origin) continue; }
    else if (url.protocol !== 'javascript:') continue;
  }
  const text = textOf(el);
  const testid = clean(el.getAttribute('data-testid')).replace(/[0-9]+/g, '#');
  // one control per kind: its test id when it has one (a list of 200 items is one control), else its label
  const kind = testid || [text.replace(/[0-9]+/g, '#'), clean(el.getAttribute('class'))].join('|');
  out.push({
    selector: clean(selectorOf(el)), text, tag: el.tagName.toLowerCase(),
    signature: `${el.tagName}|${kind}`,
    invalid_form: !!(el.form && (el.type === 'submit' || el.type === 'image') && !el.form.checkValidity()),
  });
}
return out;
"""

FIND_AND_SCROLL = r"""
const el = document.querySelector(arguments[0]);
if (el) el.scrollIntoView({block: 'center', inline: 'center'});
return el;
"""
