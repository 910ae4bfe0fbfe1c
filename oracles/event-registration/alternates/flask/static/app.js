(function () {
  "use strict";
  var selectedId = null;
  var $ = function (id) { return document.getElementById(id); };

  function setMessage(text) { $("message").textContent = text || ""; }

  function api(method, url, body) {
    var opts = { method: method, headers: {} };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(url, opts).then(function (res) {
      if (res.status === 204) return { ok: true, data: null };
      return res.json().then(function (data) {
        return { ok: res.ok, data: data };
      }, function () {
        return { ok: res.ok, data: { message: "request failed (" + res.status + ")" } };
      });
    });
  }

  function renderEvents(items) {
    var list = $("event-list");
    list.textContent = "";
    items.forEach(function (ev) {
      var li = document.createElement("li");
      li.setAttribute("data-testid", "event-item");
      li.setAttribute("data-event-id", String(ev.id));
      if (ev.id === selectedId) li.className = "selected";
      var title = document.createElement("span");
      title.setAttribute("data-testid", "event-title");
      title.textContent = ev.title;
      var starts = document.createElement("span");
      starts.className = "starts";
      starts.textContent = ev.starts_at;
      var seats = document.createElement("span");
      seats.setAttribute("data-testid", "event-seats");
      seats.textContent = ev.seats_left + " seats left";
      li.appendChild(title);
      li.appendChild(starts);
      li.appendChild(seats);
      li.addEventListener("click", function () { selectEvent(ev); });
      list.appendChild(li);
      if (ev.id === selectedId) $("selected-event").textContent = ev.title;
    });
  }

  function loadEvents() {
    return api("GET", "/api/events").then(function (r) {
      if (r.ok) renderEvents(r.data.items);
      return r;
    });
  }

  function loadAttendees() {
    if (selectedId === null) return Promise.resolve();
    var id = selectedId;
    return api("GET", "/api/events/" + id + "/registrations").then(function (r) {
      if (id !== selectedId) return;
      var list = $("attendee-list");
      list.textContent = "";
      if (!r.ok) return;
      r.data.items.forEach(function (reg) {
        var li = document.createElement("li");
        li.setAttribute("data-testid", "attendee-item");
        li.setAttribute("data-registration-id", String(reg.id));
        li.textContent = reg.name;
        list.appendChild(li);
      });
    });
  }

  function selectEvent(ev) {
    selectedId = ev.id;
    $("selected-event").textContent = ev.title;
    Array.prototype.forEach.call(document.querySelectorAll("[data-testid=event-item]"), function (li) {
      li.className = li.getAttribute("data-event-id") === String(ev.id) ? "selected" : "";
    });
    $("attendee-list").textContent = "";
    return loadAttendees();
  }

  function capacityValue(text) {
    var t = text.trim();
    return /^[+-]?\d+$/.test(t) ? parseInt(t, 10) : text;
  }

  $("new-event-form").addEventListener("submit", function (e) {
    e.preventDefault();
    setMessage("");
    var body = {
      title: $("new-event-title").value,
      starts_at: $("new-event-starts").value,
      capacity: capacityValue($("new-event-capacity").value)
    };
    api("POST", "/api/events", body).then(function (r) {
      if (!r.ok) { setMessage(r.data.message); return; }
      $("new-event-title").value = "";
      $("new-event-starts").value = "";
      $("new-event-capacity").value = "";
      return loadEvents().then(function () { setMessage(""); });
    }).catch(function (err) { setMessage("network error: " + err); });
  });

  $("register-form").addEventListener("submit", function (e) {
    e.preventDefault();
    setMessage("");
    if (selectedId === null) { setMessage("select an event first"); return; }
    var body = { name: $("attendee-name").value, email: $("attendee-email").value };
    api("POST", "/api/events/" + selectedId + "/registrations", body).then(function (r) {
      if (!r.ok) {
        setMessage(r.data.message);
        return loadEvents();
      }
      $("attendee-name").value = "";
      $("attendee-email").value = "";
      return Promise.all([loadEvents(), loadAttendees()]).then(function () { setMessage(""); });
    }).catch(function (err) { setMessage("network error: " + err); });
  });

  loadEvents().catch(function (err) { setMessage("network error: " + err); });
})();
