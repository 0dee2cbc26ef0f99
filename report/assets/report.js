// The run report: draws the curves as inline SVG and fills the trajectory
// browser, both from the JSON in the script element with id "data".
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("data").textContent);
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
  var DASHES = ["", "6 3", "2 3", "8 3 2 3"];
  var W = 460, H = 250, M = { l: 56, r: 14, t: 12, b: 34 };

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  // fmt prints a value compactly: 3 significant digits, integers whole.
  function fmt(v) {
    if (v === Math.round(v) && Math.abs(v) < 1e6) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return String(Number(v.toPrecision(3)));
  }

  // ticks is about n round values covering [lo, hi].
  function ticks(lo, hi, n, integer) {
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    if (integer) step = Math.max(1, Math.round(step));
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }

  // extent is [min, max] of xs, widened when empty of width.
  function extent(xs, pad) {
    var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
    if (lo === hi) { var d = pad || Math.abs(lo) * 0.1 || 1; lo -= d; hi += d; }
    return [lo, hi];
  }

  // nice widens a domain to round tick values.
  function nice(d) {
    var t = ticks(d[0], d[1], 5), step = t.length > 1 ? t[1] - t[0] : 0;
    if (!step) return d;
    return [Math.floor(d[0] / step + 1e-9) * step, Math.ceil(d[1] / step - 1e-9) * step];
  }

  // linesOf collects the curves of one chart: each series of each run.
  function linesOf(spec) {
    var multi = data.runs.length > 1, lines = [];
    data.runs.forEach(function (run, ri) {
      var rows = spec.source === "val" ? run.val : run.train;
      spec.series.forEach(function (s, si) {
        var pts = [];
        (rows || []).forEach(function (r) {
          var v = r[s.key];
          if (typeof v === "number" && isFinite(v)) pts.push([r.step, v]);
        });
        if (!pts.length) return;
        pts.sort(function (a, b) { return a[0] - b[0]; });
        lines.push({
          label: multi ? run.name + " · " + s.label : s.label,
          color: COLORS[(multi ? ri : si) % COLORS.length],
          dash: multi ? DASHES[si % DASHES.length] : "",
          pts: pts
        });
      });
    });
    return lines;
  }

  // warnMarks is every run's warning steps, coloured by run when comparing.
  function warnMarks() {
    var multi = data.runs.length > 1, marks = [];
    data.runs.forEach(function (run, ri) {
      (run.warnings || []).forEach(function (w) {
        marks.push({ step: w.step, run: run.name, kinds: w.kinds, color: multi ? COLORS[ri % COLORS.length] : "" });
      });
    });
    return marks;
  }

  function drawChart(fig, spec) {
    var lines = linesOf(spec), marks = warnMarks();
    var holder = el("div");
    fig.appendChild(holder);
    if (!lines.length) {
      holder.innerHTML = '<svg viewBox="0 0 ' + W + " " + 60 + '" role="img"><text class="empty" x="' + W / 2 +
        '" y="34" text-anchor="middle">no data recorded</text></svg>';
      return;
    }
    var xs = [], ys = [];
    lines.forEach(function (l) { l.pts.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    marks.forEach(function (m) { xs.push(m.step); });
    ys = ys.concat(spec.y_span || []);
    var xd = extent(xs, 1), yd = nice(extent(ys));
    var pw = W - M.l - M.r, ph = H - M.t - M.b;
    var sx = function (v) { return M.l + (v - xd[0]) / (xd[1] - xd[0]) * pw; };
    var sy = function (v) { return M.t + ph - (v - yd[0]) / (yd[1] - yd[0]) * ph; };
    var svg = ['<svg viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="' + esc(spec.title) + '">'];
    ticks(yd[0], yd[1], 5).forEach(function (v) {
      var y = sy(v).toFixed(1);
      svg.push('<line class="grid" x1="' + M.l + '" x2="' + (W - M.r) + '" y1="' + y + '" y2="' + y + '"/>');
      svg.push('<text x="' + (M.l - 6) + '" y="' + y + '" dy="0.32em" text-anchor="end">' + esc(fmt(v)) + "</text>");
    });
    ticks(xd[0], xd[1], 6, true).forEach(function (v) {
      var x = sx(v).toFixed(1);
      svg.push('<line class="axis" x1="' + x + '" x2="' + x + '" y1="' + (M.t + ph) + '" y2="' + (M.t + ph + 4) + '"/>');
      svg.push('<text x="' + x + '" y="' + (M.t + ph + 16) + '" text-anchor="middle">' + esc(fmt(v)) + "</text>");
    });
    svg.push('<line class="axis" x1="' + M.l + '" x2="' + M.l + '" y1="' + M.t + '" y2="' + (M.t + ph) + '"/>');
    svg.push('<line class="axis" x1="' + M.l + '" x2="' + (W - M.r) + '" y1="' + (M.t + ph) + '" y2="' + (M.t + ph) + '"/>');
    svg.push('<text x="' + (M.l + pw / 2) + '" y="' + (H - 3) + '" text-anchor="middle">step</text>');
    marks.forEach(function (m) {
      var x = sx(m.step).toFixed(1), style = m.color ? ' style="stroke:' + m.color + '"' : "";
      var tip = "<title>" + esc((data.runs.length > 1 ? m.run + ": " : "") + "step " + m.step + ": " + m.kinds.join(", ")) + "</title>";
      svg.push('<line class="warn-line"' + style + ' x1="' + x + '" x2="' + x + '" y1="' + M.t + '" y2="' + (M.t + ph) + '">' + tip + "</line>");
      svg.push('<path class="warn-mark" d="M' + x + " " + (M.t + 6) + " l-4 -6 h8 z\">" + tip + "</path>");
    });
    lines.forEach(function (l) {
      var d = l.pts.map(function (p, i) { return (i ? "L" : "M") + sx(p[0]).toFixed(1) + " " + sy(p[1]).toFixed(1); }).join("");
      svg.push('<path d="' + d + '" fill="none" stroke="' + l.color + '" stroke-width="1.6"' +
        (l.dash ? ' stroke-dasharray="' + l.dash + '"' : "") + "/>");
      if (l.pts.length === 1) {
        svg.push('<circle cx="' + sx(l.pts[0][0]).toFixed(1) + '" cy="' + sy(l.pts[0][1]).toFixed(1) + '" r="3" fill="' + l.color + '"/>');
      }
    });
    svg.push('<line class="guide" visibility="hidden" y1="' + M.t + '" y2="' + (M.t + ph) + '"/>');
    svg.push('<rect class="hit" x="' + M.l + '" y="' + M.t + '" width="' + pw + '" height="' + ph + '" fill="transparent"/>');
    svg.push("</svg>");
    holder.innerHTML = svg.join("");
    fig.appendChild(legend(lines, marks));
    var readout = el("div", "readout");
    fig.appendChild(readout);
    hover(holder.firstChild, lines, sx, xd, pw, readout);
  }

  function legend(lines, marks) {
    var box = el("div", "legend");
    lines.forEach(function (l) {
      var item = el("span"), sw = el("span", "swatch");
      sw.style.borderTopColor = l.color;
      if (l.dash) sw.style.borderTopStyle = "dashed";
      item.appendChild(sw);
      item.appendChild(document.createTextNode(l.label));
      box.appendChild(item);
    });
    if (marks.length) {
      var steps = marks.map(function (m) { return (data.runs.length > 1 ? m.run + " " : "") + m.step; });
      box.appendChild(el("span", "warn", "▼ warnings at step " + steps.join(", ")));
    }
    return box;
  }

  // hover shows the values at the step nearest the pointer.
  function hover(svg, lines, sx, xd, pw, readout) {
    var guide = svg.querySelector(".guide");
    svg.addEventListener("mousemove", function (e) {
      var box = svg.getBoundingClientRect();
      var x = (e.clientX - box.left) * W / box.width;
      var step = xd[0] + (x - M.l) / pw * (xd[1] - xd[0]);
      var parts = [], best = null;
      lines.forEach(function (l) {
        var p = l.pts.reduce(function (a, b) { return Math.abs(b[0] - step) < Math.abs(a[0] - step) ? b : a; });
        if (best === null || Math.abs(p[0] - step) < Math.abs(best - step)) best = p[0];
      });
      lines.forEach(function (l) {
        l.pts.forEach(function (p) { if (p[0] === best) parts.push(l.label + " " + fmt(p[1])); });
      });
      guide.setAttribute("x1", sx(best));
      guide.setAttribute("x2", sx(best));
      guide.setAttribute("visibility", "visible");
      readout.textContent = "step " + best + ": " + parts.join(" · ");
    });
    svg.addEventListener("mouseleave", function () {
      guide.setAttribute("visibility", "hidden");
      readout.textContent = "";
    });
  }

  function drawCharts() {
    data.charts.forEach(function (spec) {
      var fig = $("chart-" + spec.id);
      if (fig) drawChart(fig, spec);
    });
  }

  // The trajectory browser.

  function text(i) { return i >= 0 ? data.texts[i] : ""; }

  function option(sel, value, label) {
    var o = el("option", "", label);
    o.value = String(value);
    sel.appendChild(o);
  }

  function successes(g) { return g.members.filter(function (m) { return m.success; }).length; }

  function fillGroups() {
    var sel = $("group-select"), file = data.files[Number($("step-select").value)];
    sel.textContent = "";
    file.groups.forEach(function (g, i) {
      option(sel, i, "group " + g.group_id + " · " + g.tag + " · seed " + g.seed + " (" + successes(g) + "/" + g.members.length + " success)");
    });
    showGroup();
  }

  function showGroup() {
    var panel = $("trajectories"), file = data.files[Number($("step-select").value)];
    var g = file.groups[Number($("group-select").value)];
    panel.textContent = "";
    if (!g) { panel.appendChild(el("p", "none", "this file has no trajectories")); return; }
    $("group-summary").textContent = file.label + " · " + g.members.length + " members, " + successes(g) + " succeeded";
    g.members.forEach(function (m) { panel.appendChild(memberView(m)); });
  }

  function memberView(m) {
    var box = el("div", "member"), head = el("div", "member-head");
    head.appendChild(el("span", "badge " + (m.success ? "success" : "fail"), m.success ? "success" : "fail"));
    head.appendChild(el("span", "", "env " + m.env_id));
    head.appendChild(el("span", "stats", "score " + fmt(m.score) + " · penalty " + fmt(m.penalty) + " · " + m.num_actions + " actions"));
    box.appendChild(head);
    var rewards = (m.turn_rewards || []).map(fmt).join(", ");
    box.appendChild(el("div", "stats", "turn rewards: " + (rewards || "none")));
    if (m.system >= 0 || m.prompt >= 0) {
      var sys = el("details", "system");
      sys.appendChild(el("summary", "", "system prompt and instructions"));
      if (m.system >= 0) sys.appendChild(el("pre", "", text(m.system)));
      if (m.prompt >= 0) sys.appendChild(el("pre", "", text(m.prompt)));
      box.appendChild(sys);
    }
    var list = el("ol", "turns");
    (m.turns || []).forEach(function (t, i) { list.appendChild(turnView(t, i)); });
    box.appendChild(list);
    return box;
  }

  function turnView(t, i) {
    var li = el("li", "turn"), head = el("div", "turn-head");
    head.appendChild(el("span", "", "turn " + (i + 1)));
    if (t.reward !== undefined) head.appendChild(el("span", "reward", "reward " + fmt(t.reward)));
    li.appendChild(head);
    if (t.state) li.appendChild(el("pre", "state", t.state));
    if (!t.responded) return li;
    if (t.think) li.appendChild(el("div", "think", t.think));
    var acts = el("div", "actions");
    if (t.actions && t.actions.length) {
      acts.appendChild(document.createTextNode("actions: "));
      t.actions.forEach(function (a) {
        acts.appendChild(el("span", "action", a));
        acts.appendChild(document.createTextNode(" "));
      });
    } else {
      acts.appendChild(el("span", "noaction", "no actions parsed"));
    }
    li.appendChild(acts);
    if (t.raw !== undefined) {
      li.appendChild(el("div", "raw-label", "response not in the <think>…</think><answer>…</answer> format:"));
      li.appendChild(el("pre", "raw", t.raw));
    }
    return li;
  }

  function initBrowser() {
    var stepSel = $("step-select");
    if (!stepSel) return;
    if (!data.files.length) {
      $("trajectories").appendChild(el("p", "none", "no trajectories recorded"));
      return;
    }
    data.files.forEach(function (f, i) { option(stepSel, i, f.label); });
    stepSel.value = String(data.files.length - 1);
    stepSel.addEventListener("change", fillGroups);
    $("group-select").addEventListener("change", showGroup);
    fillGroups();
  }

  drawCharts();
  initBrowser();
})();
