/* commitsleuth report: draws one page of findings at a time from the JSON data block.
 * Inlined into the HTML by report.py. Log text only ever reaches the page through
 * textContent and setAttribute, never as markup, so a log line cannot become an element. */
(function () {
  "use strict";
  // The data in use: the first page alone while the rest is still being read, then everything.
  var EV, TL, F, TEXT, KIND, TOTAL = 0, PAGE = 20, MAX_LANES = 12, ready = false, drawn = false;
  function use(data) {
    EV = data.events;      // id -> [kind, time, actor, path, status, where, raw, outcome, facts]
    TL = data.timelines;
    F = data.findings;     // [code, name, severity, partition, place, summary, actors, evidence, cause, remedy, timeline]
    TEXT = data.texts;     // shared strings (cause, remedy, location, axis label, log file); null at 0
    KIND = data.kinds;     // kind -> [symbol, label]
    TOTAL = data.total;
    PAGE = data.pageSize || PAGE;
    MAX_LANES = data.maxLanes || MAX_LANES;
  }

  // where is "file:line" as [file text index, line], or a plain string for other origins
  function whereOf(ev) { var w = ev[5]; return typeof w === "string" ? w : TEXT[w[0]] + ":" + w[1]; }
  function symbolOf(ev) { return (KIND[ev[0]] || ["."])[0]; }
  function labelOf(ev) { return (KIND[ev[0]] || [null, ev[0]])[1]; }
  var state = {page: 0, matches: null};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function pct(x) { return (x * 100).toFixed(3) + "%"; }

  function eventRows(ev) {
    return [["kind", labelOf(ev) + " (" + ev[0] + ")"], ["time", ev[1]], ["actor", ev[2]], ["path", ev[3]],
            ["status", ev[4]], ["evidence", whereOf(ev)]];
  }

  // An event's key facts (a file's name, size and time; a JSON line's key fields) as a table,
  // then its raw line: shown as is when it is all there is, one click away behind the facts.
  function factsAndRaw(ev) {
    var out = document.createDocumentFragment();
    var facts = ev[8] || [];
    if (facts.length) {
      var list = el("div", "facts");
      facts.forEach(function (f) {
        var one = el("span", "fact");
        one.appendChild(el("b", null, f[0]));
        one.appendChild(el("span", null, f[1]));
        list.appendChild(one);
      });
      out.appendChild(list);
    }
    if (ev[6] && facts.length) {
      var d = el("details", "raw");
      d.appendChild(el("summary", null, "raw line (" + ev[6].length + " characters)"));
      d.appendChild(el("pre", null, ev[6]));
      out.appendChild(d);
    } else if (ev[6]) {
      out.appendChild(el("pre", "raw", ev[6]));
    }
    return out;
  }

  function showEvent(panel, id) {
    var ev = EV[id];
    panel.textContent = "";
    if (!ev) { panel.appendChild(el("span", "hint", "event " + id + " is not in this report")); return; }
    var t = el("table", "event");
    eventRows(ev).forEach(function (r) {
      if (r[1] === null || r[1] === undefined || r[1] === "") return;
      var tr = el("tr");
      tr.appendChild(el("th", null, r[0]));
      var td = el("td", r[0] === "evidence" ? "where" : null, r[1]);
      tr.appendChild(td);
      t.appendChild(tr);
    });
    panel.appendChild(t);
    panel.appendChild(factsAndRaw(ev));
  }

  function select(fig, panel, id) {
    var marks = fig.querySelectorAll(".mark");
    for (var i = 0; i < marks.length; i++) {
      marks[i].classList.toggle("selected", marks[i].getAttribute("data-event") === String(id));
    }
    showEvent(panel, id);
  }

  function timeline(tl, evidence, actors) {
    var fig = el("figure", "tl");
    fig.style.margin = "0";
    var axis = tl.axis;
    fig.appendChild(el("div", "axis-label " + axis[0], TEXT[axis[1]]));
    var panel = el("div", "detail");
    var seen = {};
    var involved = {}, anyInvolved = false;
    actors.forEach(function (a) { involved[a] = true; });
    // a finding names an attempt by its one label, which is the lane's label
    function isInvolved(lane) { return involved[lane[8]] === true || involved[lane[0]] === true; }
    tl.lanes.forEach(function (lane) { if (isInvolved(lane)) anyInvolved = true; });
    if (anyInvolved) fig.classList.add("focus");
    tl.lanes.forEach(function (lane) {
      lane[7].forEach(function (m) { var ev = EV[m[0]]; if (ev) seen[symbolOf(ev)] = [labelOf(ev), ev[7]]; });
    });

    // the application every attempt lane's label starts with is said once, above the lanes
    var apps = {}, shared = null;
    tl.lanes.forEach(function (lane) { if (lane[1] === "attempt") apps[lane[9] || ""] = true; });
    var appList = Object.keys(apps);
    if (appList.length === 1 && appList[0] &&
        tl.lanes.some(function (lane) { return (lane[8] || "").indexOf(appList[0] + "/") === 0; })) {
      shared = appList[0];
      fig.appendChild(el("div", "lanes-app", "attempts of " + shared + ":"));
    }
    function shownLabel(lane) {
      var name = lane[8] || lane[0];
      return shared && name.indexOf(shared + "/") === 0 ? name.slice(shared.length + 1) : name;
    }

    function laneRow(lane) {
      // lane: [actor, actorType, window, status, outcome, start, end, [[eventId, pos], ...], label, app]
      // (the label names the application too when attempts of several share the partition)
      var row = el("div", "lane" + (isInvolved(lane) ? " involved" : ""));
      row.setAttribute("data-actor", lane[0]);
      if (lane[9]) row.setAttribute("data-app", lane[9]);
      var label = el("div", "lane-label");
      label.appendChild(el("span", "actor", shownLabel(lane)));
      label.appendChild(el("span", "type", " " + lane[1] + (lane[3] ? ", " + lane[3] : "")));
      label.title = (lane[8] || lane[0]) + " (" + lane[1] + (lane[9] ? ", application " + lane[9] : "") + ")";
      row.appendChild(label);
      var track = el("div", "track");
      axis[2].forEach(function (t) {
        var line = el("div", "gridline");
        line.style.left = pct(t[0]);
        track.appendChild(line);
      });
      var bar = el("div", "bar " + lane[4] + " " + lane[2]);
      bar.style.left = pct(lane[5]);
      bar.style.width = pct(Math.max(lane[6] - lane[5], 0));
      bar.title = lane[2] === "attempt" ? "attempt window (start to end)" : "first to last event of this actor";
      track.appendChild(bar);
      lane[7].forEach(function (m) {
        var ev = EV[m[0]] || ["?", "", "", "", "", "", "", "info"];
        var b = el("button", "mark " + ev[7] + (evidence[m[0]] ? " evidence" : ""), symbolOf(ev));
        b.type = "button";
        b.style.left = pct(m[1]);
        b.setAttribute("data-event", m[0]);
        b.setAttribute("aria-label", labelOf(ev) + " by " + ev[2]);
        b.title = labelOf(ev) + " — " + ev[1] + "\n" + whereOf(ev);
        b.addEventListener("click", function () { select(fig, panel, m[0]); });
        b.addEventListener("mouseenter", function () { showEvent(panel, m[0]); });
        b.addEventListener("focus", function () { select(fig, panel, m[0]); });
        track.appendChild(b);
      });
      row.appendChild(track);
      return row;
    }

    // A partition touched by many actors shows this finding's lanes and a few others; the rest
    // are drawn only on request, so a busy partition stays readable and the page stays light.
    var shown = 0, hidden = [];
    tl.lanes.forEach(function (lane) {
      if (involved[lane[0]] !== true && shown >= MAX_LANES) {
        var spot = document.createComment("lane");  // keeps the lane's place in time order
        fig.appendChild(spot);
        hidden.push([lane, spot]);
        return;
      }
      if (involved[lane[0]] !== true) shown++;
      fig.appendChild(laneRow(lane));
    });
    if (hidden.length) {
      var more = el("button", "more-lanes", "show " + hidden.length + " more lane" + (hidden.length > 1 ? "s" : "") + " of this partition");
      more.type = "button";
      more.addEventListener("click", function () {
        hidden.forEach(function (h) { fig.replaceChild(laneRow(h[0]), h[1]); });
        more.remove();
      });
      fig.appendChild(more);
    }
    var axisRow = el("div", "axis-row");
    axisRow.appendChild(el("div"));
    var ticks = el("div", "axis");
    axis[2].forEach(function (t) {
      var tick = el("div", "tick");
      tick.style.left = pct(t[0]);
      tick.appendChild(el("span", null, t[1]));
      ticks.appendChild(tick);
    });
    axisRow.appendChild(ticks);
    fig.appendChild(axisRow);
    var legend = el("div", "legend", "Marks:");
    Object.keys(seen).sort().forEach(function (s) {
      var b = el("b", null, s);
      b.className = "mark-key " + seen[s][1];
      b.style.background = "var(--" + seen[s][1] + ")";
      legend.appendChild(b);
      legend.appendChild(document.createTextNode(seen[s][0]));
    });
    legend.appendChild(document.createTextNode(
      " — green: published or succeeded; red: removed, failed or refused; ringed: evidence of this finding; bar: attempt window or first to last event."));
    fig.appendChild(legend);
    panel.appendChild(el("span", "hint", "Hover or click a mark to see its event and evidence line."));
    fig.appendChild(panel);
    fig._panel = panel;
    return fig;
  }

  function finding(i) {
    var f = F[i];
    var art = el("article", "finding sev-" + f[2]);
    art.id = "finding-" + (i + 1);
    art.setAttribute("data-code", f[0]);
    var h = el("h3");
    h.appendChild(el("span", "num", "#" + (i + 1) + " "));
    h.appendChild(el("span", "code", f[0] + " " + f[1] + " "));
    h.appendChild(el("span", "sev", f[2]));
    art.appendChild(h);
    var p = el("p", "partition");
    p.appendChild(el("b", null, f[3] || "(no partition)"));
    p.appendChild(document.createTextNode(" in "));
    p.appendChild(el("code", null, TEXT[f[4]]));
    art.appendChild(p);
    art.appendChild(el("p", "summary", f[5]));
    var evidence = {};
    f[7].forEach(function (id) { evidence[id] = true; });
    var fig = null;
    if (f[10] !== null && TL[f[10]]) {
      fig = timeline(TL[f[10]], evidence, f[6]);
      art.appendChild(fig);
    } else {
      art.appendChild(el("p", "empty", "No partition timeline: the finding names no partition events."));
    }
    art.appendChild(el("h4", null, "Evidence"));
    var list = el("div", "evidence-list");
    f[7].forEach(function (id) {
      var ev = EV[id];
      if (!ev) return;
      var item = el("div", "item");
      item.setAttribute("data-event", id);
      item.appendChild(el("div", "where", whereOf(ev) + (ev[2] ? "  [" + ev[2] + "]" : "")));
      item.appendChild(factsAndRaw(ev));
      if (fig) item.addEventListener("click", function () { select(fig, fig._panel, id); });
      list.appendChild(item);
    });
    art.appendChild(list);
    if (TEXT[f[8]]) { var c = el("p", "cause"); c.appendChild(el("b", null, "Cause. ")); c.appendChild(document.createTextNode(TEXT[f[8]])); art.appendChild(c); }
    if (TEXT[f[9]]) { var r = el("p", "remedy"); r.appendChild(el("b", null, "Remedy. ")); r.appendChild(document.createTextNode(TEXT[f[9]])); art.appendChild(r); }
    return art;
  }

  function matches() {
    var sev = document.getElementById("cs-sev").value;
    var code = document.getElementById("cs-code").value;
    var q = document.getElementById("cs-q").value.toLowerCase();
    var out = [];
    for (var i = 0; i < F.length; i++) {
      var f = F[i];
      if (sev && f[2] !== sev) continue;
      if (code && f[0] !== code) continue;
      if (q && [f[3], TEXT[f[4]], f[5], f[6].join(" ")].join(" ").toLowerCase().indexOf(q) < 0) continue;
      out.push(i);
    }
    return out;
  }

  function render() {
    var list = document.getElementById("cs-findings");
    var m = state.matches;
    var pages = Math.max(1, Math.ceil(m.length / PAGE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    list.textContent = "";
    var from = state.page * PAGE, to = Math.min(m.length, from + PAGE);
    for (var k = from; k < to; k++) list.appendChild(finding(m[k]));
    if (!m.length) list.appendChild(el("p", "empty", F.length ? "No finding matches the filter." : "No findings."));
    drawn = true;
    info();
  }

  function info() {
    var m = state.matches, n = ready ? m.length : TOTAL;
    var pages = Math.max(1, Math.ceil(n / PAGE));
    var from = state.page * PAGE, to = Math.min(m.length, from + PAGE);
    document.getElementById("cs-pageinfo").textContent = !n ? "0 findings" :
      "findings " + (from + 1) + "–" + to + " of " + n + " · page " + (state.page + 1) + " of " + pages +
      (ready ? "" : " · reading the rest…");
    document.getElementById("cs-prev").disabled = !ready || state.page === 0;
    document.getElementById("cs-next").disabled = !ready || state.page >= pages - 1;
    ["cs-sev", "cs-code", "cs-q"].forEach(function (id) { document.getElementById(id).disabled = !ready; });
  }

  function refilter() { state.matches = matches(); state.page = 0; render(); }

  function goToHash() {
    var m = /^#finding-(\d+)$/.exec(location.hash);
    if (!m) return false;
    var i = parseInt(m[1], 10) - 1, at = state.matches.indexOf(i);
    if (at < 0) return false;
    state.page = Math.floor(at / PAGE);
    render();
    var target = document.getElementById("finding-" + (i + 1));
    if (target) target.scrollIntoView();
    return true;
  }

  document.getElementById("cs-sev").addEventListener("change", refilter);
  document.getElementById("cs-code").addEventListener("change", refilter);
  document.getElementById("cs-q").addEventListener("input", refilter);
  document.getElementById("cs-prev").addEventListener("click", function () { state.page--; render(); window.scrollTo(0, document.getElementById("cs-controls").offsetTop); });
  document.getElementById("cs-next").addEventListener("click", function () { state.page++; render(); window.scrollTo(0, document.getElementById("cs-controls").offsetTop); });
  window.addEventListener("hashchange", goToHash);

  function mark(name) { document.documentElement.setAttribute("data-" + name + "-ms", performance.now().toFixed(1)); }

  function begin(first) {  // the first page, drawn before the rest of the file is read
    use(first);
    state.matches = first.findings.map(function (_, i) { return i; });
    render();
    mark("first-screen");
  }

  function finish(all) {
    use(all);
    ready = true;
    state.matches = matches();
    if (!goToHash()) { if (drawn) info(); else render(); }
    if (!document.documentElement.hasAttribute("data-first-screen-ms")) mark("first-screen");
    mark("ready");
  }

  // Small reports carry their data as JSON; big ones as gzip in base64 (a tenth of the size),
  // unpacked by the browser's own DecompressionStream.
  function readAll() {
    var plain = document.getElementById("cs-data");
    if (plain) { finish(JSON.parse(plain.textContent)); return; }
    if (typeof DecompressionStream === "undefined") {
      document.getElementById("cs-pageinfo").textContent =
        "This browser cannot unpack the other findings of this large report (it needs DecompressionStream: " +
        "Chrome 80+, Firefox 113+, Safari 16.4+); 'commitsleuth analyze' lists them all.";
      return;
    }
    var bin = atob(document.getElementById("cs-data-gz").textContent), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
      .then(function (text) { finish(JSON.parse(text)); })
      .catch(function (err) {
        document.getElementById("cs-pageinfo").textContent = "The report's data could not be unpacked: " + err;
        throw err;
      });
  }

  var first = document.getElementById("cs-first");
  if (first) begin(JSON.parse(first.textContent));
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", readAll);
  else readAll();
})();
