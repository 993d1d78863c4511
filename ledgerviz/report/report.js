// The report's page behaviour. Session bodies and plotly.js are packed (base64 of zlib
// bytes in inert script blocks): a body is unpacked into its section as it scrolls near, and
// plotly.js is started when the first timeline is drawn. Timelines are drawn as they scroll
// into view (and, in idle time, the next few below the view); WebGL timelines are released
// when they scroll away (browsers keep few WebGL contexts alive) and every timeline when it is
// far away (Plotly.purge), so a long scroll keeps the tab's memory bounded. Overview columns
// sort on click and its rows filter; a zoom or pan redraws the items in range one by one once
// few (from the items each bin trace carries); the find box searches every session's packed
// body; a link to a part of a packed section unpacks it first. Every figure's spec is a JSON
// script next to its plot div.
(function () {
  "use strict";
  var MAX_LIVE_WEBGL = 8;
  var CONFIG = { displaylogo: false, responsive: true };
  var live = new Map();  // plot div -> whether it holds a WebGL trace
  var template = JSON.parse(document.getElementById("lv-template").textContent);
  var packs = {};  // block id -> promise of its bodies
  var plotly = null;  // promise of plotly.js started

  // A packed block's bytes: base64 decoded by a plain loop (Uint8Array.from with a mapping
  // function is several times slower on megabytes), then inflated.
  function unpacked(id) {
    var text = atob(document.getElementById(id).textContent);
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).arrayBuffer();
  }

  function plotlyStarted() {
    if (!plotly) {
      plotly = unpacked("lv-plotly").then(function (code) {
        return new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
          script.onload = function () { URL.revokeObjectURL(script.src); resolve(); };
          script.onerror = reject;
          document.head.appendChild(script);
        });
      });
    }
    return plotly;
  }

  // A horizontal legend under the plot pushes the bottom margin, and plotly then draws the
  // whole plot a second time. The margin a legend needs is worked out here instead, from its
  // items' text widths, with item padding, row height and base margin read from the first
  // timeline plotly laid out itself; when the estimate falls short plotly still grows it.
  var legendFit = null;
  var measure = document.createElement("canvas").getContext("2d");

  function legendNames(figure) {
    return figure.data.filter(function (t) { return t.showlegend !== false && t.name; })
      .map(function (t) { return String(t.name); });
  }

  function bottomLegend(layout) {
    var legend = layout.legend || {};
    return legend.orientation === "h" && legend.yref === "container";
  }

  function learnLegend(div) {
    var full = div._fullLayout, items = div.querySelectorAll(".legend .traces");
    if (legendFit || !full || !items.length) return;
    measure.font = full.legend.font.size + "px " + full.legend.font.family;
    var boxes = Array.prototype.map.call(items, function (item) {
      return item.getBoundingClientRect();
    });
    var tops = new Set(boxes.map(function (box) { return Math.round(box.top); }));
    if (boxes.length < 2 || Math.round(boxes[1].top) !== Math.round(boxes[0].top)) return;
    legendFit = {
      font: measure.font,
      step: boxes[1].left - boxes[0].left - measure.measureText(items[0].textContent).width,
      row: full.legend._height / tops.size,
      base: full._size.b - full.legend._height,
    };
  }

  function presize(div, figure) {
    var layout = figure.layout, margin = layout.margin || {};
    if (!legendFit || !bottomLegend(layout)) return;
    var width = div.clientWidth - (margin.l || 0) - (margin.r || 0);
    measure.font = legendFit.font;
    var rows = 1, x = 0;
    legendNames(figure).forEach(function (name) {
      var step = measure.measureText(name).width + legendFit.step;
      if (x > 0 && x + step > width) { rows += 1; x = 0; }
      x += step;
    });
    var needed = Math.ceil(legendFit.base + rows * legendFit.row) + 1;
    layout.margin = Object.assign({}, margin, { b: Math.max(margin.b || 0, needed) });
  }

  function spec(div) {
    return JSON.parse(document.getElementById(div.dataset.figure).textContent);
  }

  function distance(div) {
    var box = div.getBoundingClientRect();
    return Math.abs(box.top + box.height / 2 - window.innerHeight / 2);
  }

  function webglContexts(div) {
    var found = [];
    div.querySelectorAll("canvas").forEach(function (canvas) {
      var gl = canvas.getContext("webgl") || canvas.getContext("experimental-webgl");
      if (gl) found.push(gl);
    });
    return found;
  }

  // Plotly.purge drops the plot, but its WebGL contexts stay alive until garbage collection;
  // they are freed at once here, so released plots never count against the browser's limit.
  function release(div) {
    if (!live.has(div)) return;
    var contexts = live.get(div) ? webglContexts(div) : [];
    live.delete(div);
    if (window.Plotly) window.Plotly.purge(div);
    contexts.forEach(function (gl) {
      var lose = gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
    });
    div.dataset.state = "released";
  }

  function makeRoomForWebgl() {
    var webgl = [];
    live.forEach(function (isWebgl, div) { if (isWebgl) webgl.push(div); });
    webgl.sort(function (a, b) { return distance(b) - distance(a); });
    while (webgl.length >= MAX_LIVE_WEBGL) release(webgl.shift());
  }

  // A timeline whose bin traces carry the items they hold (lvItems, written by
  // plot/lanes.trace: x0 and seq as differences from the previous item, span, a code into the
  // escaped names) redraws the range in view after a zoom or pan: a bin trace with at most
  // REDRAW_LIMIT items there draws each of them, and keeps only its bins outside the range
  // (the overview strip draws those); with more, its bins stay as they are.
  var REDRAW_LIMIT = 1000;

  function decoded(packed) {
    if (!packed.decoded) {
      var n = packed.x0.length, x0 = new Float64Array(n), x1 = new Float64Array(n);
      var seq = new Float64Array(n), x = 0, s = 0;
      for (var i = 0; i < n; i++) {
        x += packed.x0[i];
        s += packed.seq[i];
        x0[i] = x;
        x1[i] = x + packed.span[i];
        seq[i] = s;
      }
      packed.decoded = { x0: x0, x1: x1, seq: seq };
    }
    return packed.decoded;
  }

  function itemsIn(packed, low, high) {
    var d = decoded(packed), found = [];
    for (var i = 0; i < d.x0.length; i++) {
      if (d.x1[i] >= low && d.x0[i] <= high && found.push(i) > REDRAW_LIMIT) return null;
    }
    return found;
  }

  function binsOutside(trace, low, high) {
    var x = [], y = [], text = [];
    for (var i = 0; i < trace.x.length; i += 3) {
      var a = trace.x[i], b = trace.x[i + 1];
      if (Math.max(a, b) < low || a > high) {
        x.push(a, b, null);
        y.push(trace.y[i], trace.y[i + 1], null);
        text.push(trace.hovertext[i], "", "");
      }
    }
    return Object.assign({}, trace, { x: x, y: y, hovertext: text });
  }

  // Names were escaped when the report was written; the trace name is the report's own.
  function itemLabel(packed, d, i) {
    var code = packed.name[i];
    var named = code >= 0 ? "<b>" + packed.names[code] + "</b><br>" : "";
    return named + packed.trace + (d.seq[i] >= 0 ? " · seq " + d.seq[i] : "");
  }

  function eachItem(bins, packed, items) {
    var d = decoded(packed), bar = !packed.marker, x = [], y = [], text = [];
    items.forEach(function (i) {
      if (bar) {
        x.push(d.x0[i], d.x1[i], null);
        y.push(packed.lane, packed.lane, null);
        text.push(itemLabel(packed, d, i), "", "");
      } else {
        x.push(d.x0[i]);
        y.push(packed.lane);
        text.push(itemLabel(packed, d, i));
      }
    });
    var color = bins.line.color, width = bins.line.width;
    return {
      type: "scatter", name: packed.trace, x: x, y: y, hovertext: text, hoverinfo: "text",
      legendgroup: bins.legendgroup, showlegend: false, opacity: bins.opacity,
      connectgaps: false,
      mode: bar ? (packed.end_markers ? "lines+markers" : "lines") : "markers",
      line: { color: color, width: width },
      marker: bar ? { color: color, size: width * 0.9 }
        : { color: color, size: packed.marker.size, symbol: packed.marker.symbol,
            line: { width: 1, color: "white" } },
    };
  }

  function redrawsZoom(div, figure) {
    if (!figure.data.some(function (t) { return t.lvItems; })) return;
    var redrawing = false;
    div.on("plotly_relayout", function () {
      if (redrawing || !live.has(div)) return;
      var axis = div._fullLayout.xaxis;
      var low = axis.r2l(axis.range[0]), high = axis.r2l(axis.range[1]), data = [];
      figure.data.forEach(function (trace) {
        var items = trace.lvItems && itemsIn(trace.lvItems, low, high);
        if (items && items.length) {
          data.push(binsOutside(trace, low, high), eachItem(trace, trace.lvItems, items));
        } else {
          data.push(trace);
        }
      });
      redrawing = true;
      window.Plotly.react(div, data, div.layout).then(function () {
        div.dataset.redraws = String(Number(div.dataset.redraws || 0) + 1);
      }, function (error) {
        console.error("ledgerviz: the zoomed range could not be redrawn:", error);
      }).then(function () { redrawing = false; });
    });
  }

  // Timelines are drawn one after another, so the first calibrates the legend's margin for
  // the rest (see presize).
  var drawn = Promise.resolve();
  var queued = 0;  // draws not yet settled
  var reached = false;  // whether a timeline was drawn: the reader is among the sessions

  function draw(div) {
    if (live.has(div)) return;
    var figure = spec(div);
    figure.layout.template = template;
    var isWebgl = figure.data.some(function (t) { return t.type === "scattergl"; });
    if (isWebgl) makeRoomForWebgl();
    live.set(div, isWebgl);
    div.dataset.state = "drawing";
    queued += 1;
    drawn = drawn.then(plotlyStarted).then(function () {
      if (!live.has(div)) return null;
      presize(div, figure);
      return window.Plotly.newPlot(div, figure.data, figure.layout, CONFIG).then(function () {
        learnLegend(div);
        if (!live.has(div)) return;
        redrawsZoom(div, figure);
        div.dataset.state = "drawn";
        div.dataset.draws = String(Number(div.dataset.draws || 0) + 1);
        reached = true;
      });
    }).catch(function (error) {
      div.dataset.state = "failed";
      console.error("ledgerviz: a timeline could not be drawn:", error);
    }).then(function () {
      queued -= 1;
      aheadWhenIdle();
    });
  }

  // Once the reader is among the sessions, the page uses its idle time to unpack and draw the
  // timelines below the view, up to AHEAD sections past it, one at a time, so that scrolling
  // on finds them drawn (a report of a few sessions is then drawn whole soon after it opens).
  // WebGL timelines are left to scroll near: their contexts are few.
  var AHEAD = 16;
  var aheadPending = false;
  var idle = window.requestIdleCallback
    ? function (task) { window.requestIdleCallback(task, { timeout: 200 }); }
    : function (task) { window.setTimeout(task, 0); };

  function aheadWhenIdle() {
    if (!reached || queued || aheadPending) return;
    aheadPending = true;
    idle(function () {
      aheadPending = false;
      if (!queued) drawAhead();
    });
  }

  function drawAhead() {
    var sections = document.querySelectorAll("section.session"), below = 0;
    for (var i = 0; i < sections.length; i++) {
      var box = sections[i].getBoundingClientRect();
      if (box.bottom < 0) continue;
      if (box.top > window.innerHeight && ++below > AHEAD) return;
      if (box.top > FAR) return;  // it would be put back at once
      var lazy = sections[i].querySelector("div.lv-lazy");
      if (lazy && lazy.dataset.state !== "unpacked") {
        if (!lazy.dataset.state) fill(lazy);
        return;  // aheadWhenIdle runs again once it is unpacked
      }
      var next = Array.prototype.find.call(sections[i].querySelectorAll("div.lv-plot"),
        function (div) { return !div.dataset.state && div.dataset.webgl !== "1"; });
      if (next) return draw(next);
    }
  }

  var plots = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) draw(entry.target);
      else if (live.get(entry.target)) release(entry.target);
    });
  }, { rootMargin: "600px 0px" });

  // Far from the view (FAR px), a drawn timeline is released, and an unpacked body is put
  // back to its placeholder (unpacked again when it comes near), so the page holds only what
  // is near the view however far it is scrolled.
  var FAR = 40000;  // beyond the AHEAD sections drawn in idle time
  var far = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) return;
      if (entry.target.classList.contains("lv-lazy")) repack(entry.target);
      else if (live.has(entry.target)) release(entry.target);
    });
  }, { rootMargin: FAR + "px 0px" });

  function repack(placeholder) {
    if (placeholder.dataset.state !== "unpacked") return;
    placeholder.querySelectorAll("div.lv-plot").forEach(function (div) {
      release(div);
      plots.unobserve(div);
      far.unobserve(div);
    });
    placeholder.style.minHeight = placeholder.offsetHeight + "px";
    placeholder.textContent = "";
    delete placeholder.dataset.state;
    filled.delete(placeholder);
    bodies.observe(placeholder);
  }

  function observePlots(root) {
    root.querySelectorAll("div.lv-plot").forEach(function (div) {
      plots.observe(div);
      far.observe(div);
    });
  }

  // The last few blocks unpacked are kept, decoded: a block holds many bodies in a row.
  var PACKS_KEPT = 4;
  var packOrder = [];

  function bodiesOf(id) {
    if (!packs[id]) {
      packs[id] = unpacked(id).then(function (bytes) {
        return JSON.parse(new TextDecoder().decode(bytes));
      });
      packOrder.push(id);
      while (packOrder.length > PACKS_KEPT) delete packs[packOrder.shift()];
    }
    return packs[id];
  }

  var filled = new Map();  // placeholder -> promise of its body in the page

  function fill(placeholder) {
    if (filled.has(placeholder)) return filled.get(placeholder);
    bodies.unobserve(placeholder);
    plotlyStarted();  // its timelines will need it: start it while the body unpacks
    placeholder.dataset.state = "unpacking";
    var done = bodiesOf(placeholder.dataset.pack).then(function (bodies) {
      placeholder.innerHTML = bodies[Number(placeholder.dataset.part)];
      placeholder.style.minHeight = "";
      placeholder.dataset.state = "unpacked";
      far.observe(placeholder);
      observePlots(placeholder);
      aheadWhenIdle();
    });
    filled.set(placeholder, done);
    return done;
  }

  // A link to a part of a section (#session-ID--part) whose body is still packed: unpack the
  // body, then go to the part.
  function reveal() {
    var id = location.hash.slice(1);
    if (!id || document.getElementById(id)) return;
    var section = document.getElementById(id.split("--")[0]);
    var lazy = section && section.querySelector("div.lv-lazy");
    if (!lazy) return;
    fill(lazy).then(function () {
      var target = document.getElementById(id);
      if (target) target.scrollIntoView();
    });
  }

  // The overview's filter: rows whose data-flags hold the chosen flag and whose data-text
  // (session id and file, lower case) holds the text typed.
  function filterable(overview) {
    var controls = overview.querySelector("div.filter");
    if (!controls) return;
    var flag = controls.querySelector("select"), text = controls.querySelector("input");
    var count = controls.querySelector(".shown");
    var rows = Array.prototype.slice.call(overview.querySelectorAll("tbody tr"));
    function apply() {
      var wanted = flag.value, needle = text.value.trim().toLowerCase(), shown = 0;
      rows.forEach(function (row) {
        var keep = (!wanted || row.dataset.flags.split(" ").indexOf(wanted) >= 0) &&
          row.dataset.text.indexOf(needle) >= 0;
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " shown";
    }
    flag.addEventListener("change", apply);
    text.addEventListener("input", apply);
    controls.hidden = false;
    apply();
  }

  // The find box: every session whose body holds the text (a call id, a tool, any text),
  // read from the packed bodies without drawing them; a result opens its section there.
  var FOUND_LISTED = 50;

  // The text nodes a reader sees (a figure's JSON spec and the styles left out).
  function textNodes(root) {
    return document.createTreeWalker(root, NodeFilter.SHOW_TEXT, function (node) {
      return node.parentElement && node.parentElement.closest("script, style")
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
    });
  }

  function shownText(root) {
    var walker = textNodes(root), parts = [], node;
    while ((node = walker.nextNode())) parts.push(node.textContent);
    return parts.join(" ");
  }

  // A section's text to search: its whole session id (the heading's title: the heading
  // shows a long id cut), its heading and meta line, and its body, packed or not.
  function bodyText(section) {
    var lazy = section.querySelector("div.lv-lazy");
    var id = section.querySelector("h2").title + " ";
    if (!lazy || lazy.dataset.state === "unpacked") {
      return Promise.resolve(id + shownText(section));
    }
    return bodiesOf(lazy.dataset.pack).then(function (bodies) {
      var holder = document.createElement("template");
      holder.innerHTML = bodies[Number(lazy.dataset.part)];
      return id + shownText(section) + " " + shownText(holder.content);
    });
  }

  function goTo(section, needle) {
    var lazy = section.querySelector("div.lv-lazy");
    return (lazy ? fill(lazy) : Promise.resolve()).then(function () {
      var walker = textNodes(section), node;
      while ((node = walker.nextNode())) {
        if (node.textContent.toLowerCase().indexOf(needle) >= 0) {
          var hit = node.parentElement;
          var closed = hit.closest("details:not([open])");
          if (closed) closed.open = true;
          document.querySelectorAll(".lv-hit").forEach(function (old) {
            old.classList.remove("lv-hit");
          });
          hit.classList.add("lv-hit");
          hit.scrollIntoView({ block: "center" });
          return;
        }
      }
      section.scrollIntoView();
    });
  }

  function findable(box) {
    var input = box.querySelector("input"), list = box.querySelector("ol");
    var note = box.querySelector(".found");
    box.addEventListener("submit", function (event) {
      event.preventDefault();
      var needle = input.value.trim().toLowerCase();
      list.textContent = "";
      if (!needle) { note.textContent = ""; return; }
      note.textContent = "searching…";
      var sections = Array.prototype.slice.call(document.querySelectorAll("section.session"));
      Promise.all(sections.map(bodyText)).then(function (texts) {
        var found = sections.filter(function (s, i) {
          return texts[i].toLowerCase().indexOf(needle) >= 0;
        });
        note.textContent = found.length + (found.length === 1 ? " session" : " sessions");
        found.slice(0, FOUND_LISTED).forEach(function (section) {
          var item = document.createElement("li"), link = document.createElement("a");
          link.href = "#" + section.id;
          link.textContent = section.querySelector("h2").textContent;
          link.addEventListener("click", function (click) {
            click.preventDefault();
            history.replaceState(null, "", link.href);
            goTo(section, needle);
          });
          item.appendChild(link);
          list.appendChild(item);
        });
        if (found.length) goTo(found[0], needle);
      });
    });
    box.hidden = false;
  }

  var bodies = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting && !entry.target.dataset.state) fill(entry.target);
    });
  }, { rootMargin: "1200px 0px" });

  function sortKey(cell) {
    return cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent;
  }

  function sortable(table) {
    table.querySelectorAll("th").forEach(function (th, column) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var descending = th.dataset.order !== "descending";
        table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
        th.dataset.order = descending ? "descending" : "ascending";
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = sortKey(a.cells[column]), y = sortKey(b.cells[column]);
          var order = isNaN(x) || isNaN(y) ? x.localeCompare(y) : Number(x) - Number(y);
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  // Each body keeps about the room it will take until it is unpacked, so the page's length
  // (and where a link lands) barely changes as bodies unpack; without the script nothing is
  // reserved and each section shows its heading and a note.
  document.querySelectorAll("div.lv-lazy").forEach(function (div) {
    div.style.minHeight = div.dataset.height + "px";
    bodies.observe(div);
  });
  observePlots(document);
  document.querySelectorAll("table.sortable").forEach(sortable);
  document.querySelectorAll("section.overview").forEach(filterable);
  document.querySelectorAll("form.find").forEach(findable);
  window.addEventListener("hashchange", reveal);
  reveal();
  document.body.dataset.ready = "1";
})();
