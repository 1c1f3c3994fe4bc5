// irscope report: the kernel page's linked source and stages, and the pass timeline.
// Every text from the bundle goes into the page through textContent, never as markup.
"use strict";

async function unpack(b64) {
  // Texts ride gzip-compressed and base64-encoded (no fetch: the report works from file://).
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function codeLines(container, lines, firstLine, makeExtra) {
  // One row per line: number, (extra), text. Built in a fragment: a stage may have 20k lines.
  const frag = document.createDocumentFragment();
  const rows = [];
  lines.forEach((text, i) => {
    const n = firstLine + i;
    const row = el("div", "row");
    row.dataset.line = String(n);
    row.appendChild(el("span", "num", n));
    if (makeExtra) makeExtra(row, n);
    row.appendChild(el("span", "txt", text));
    frag.appendChild(row);
    rows.push(row);
  });
  container.appendChild(frag);
  return rows;
}

const Linked = {
  stages: [],   // {name, title, lineOps, rows, pane, count}
  sourceRows: new Map(),
  statementOf: {},  // function -> (line -> its statement's first line, for lines that continue a statement)
  members: new Map(),  // "F:L" (function, statement first line) -> every line of it
  functions: null,  // the user functions (kernel, helpers) and their ops per charge mode
  selected: null,
  lineage: {},
  pictures: {},

  async init(data) {
    this.lineage = data.lineage || {};
    const stagesBox = document.getElementById("stages");
    const texts = await Promise.all(data.stages.map((s) => unpack(s.text)));
    data.stages.forEach((s, i) => {
      const pane = el("div", "pane stage-pane");
      pane.dataset.stage = s.name;
      const head = el("h3", null, s.title);
      const count = el("span", "count", "");
      head.appendChild(count);
      pane.appendChild(head);
      if (s.truncated) pane.appendChild(el("p", "note", "cut: the whole text is in 'irscope cat'"));
      const code = el("div", "code");
      pane.appendChild(code);
      const lines = texts[i].replace(/\n$/, "").split("\n");
      const rows = codeLines(code, lines, 1);
      stagesBox.appendChild(pane);
      this.stages.push({ name: s.name, title: s.title, lineOps: s.line_ops, rows, code, count });
    });
    const heat = data.heat;  // a profiled capture: samples per stage line and per source line (heat.py)
    if (heat) for (const st of this.stages) this.paintHeat((k) => st.rows[Number(k) - 1], heat.stages[st.name], heat.total);
    const src = data.source;
    const box = document.getElementById("source");
    if (!src) {
      box.appendChild(el("p", "note", "the capture stored no source"));
      return;
    }
    // Sections: the kernel (function 0), then each @triton.jit helper (data.functions,
    // absent when the kernel calls none). A statement is keyed "F:L" in every map.
    this.functions = data.functions || null;
    this.statementOf = { 0: src.statement_of || {} };
    const sections = [{ index: 0, lines: src.lines, first_line: src.first_line }];
    for (const f of (this.functions ? this.functions.functions : [])) {
      if (f.kernel) continue;
      this.statementOf[f.index] = f.statement_of || {};
      sections.push(f);
    }
    for (const [fn, of] of Object.entries(this.statementOf)) {
      for (const [line, head] of Object.entries(of)) {
        const key = `${fn}:${head}`;
        if (!this.members.has(key)) this.members.set(key, [head]);
        this.members.get(key).push(Number(line));
      }
    }
    for (const sec of sections) {
      let holder = box;
      if (sec.index !== 0) {
        holder = el("div", "helper");
        holder.dataset.fn = String(sec.index);
        const calls = sec.call_lines.length ? ` · called at line ${sec.call_lines.join(", ")}` : "";
        holder.appendChild(el("div", "fn-head", `helper ${sec.name} · ${sec.file || "?"}:${sec.first_line}-${sec.last_line}${calls}`));
        box.appendChild(holder);
      }
      const rows = codeLines(holder, sec.lines, sec.first_line, (row) => {
        row.appendChild(el("span", "ops", ""));
      });
      for (const row of rows) {
        row.dataset.fn = String(sec.index);
        const line = Number(row.dataset.line);
        this.sourceRows.set(`${sec.index}:${line}`, row);
        row.addEventListener("click", () => this.select(line, sec.index));
      }
    }
    this.paintTotals();
    if (heat) this.paintHeat((k) => this.sourceRows.get(k), heat.source, heat.total);
    const charge = document.getElementById("charge-calls");
    if (charge) {
      charge.addEventListener("change", () => {
        this.mode = charge.checked ? "call-line" : "own";
        this.paintTotals();
        if (this.selected !== null) this.select(this.selected, this.selectedFn);
      });
    }
    const m = /(?:fn=(\d+)&)?line=(\d+)/.exec(location.hash);
    if (m) this.select(Number(m[2]), Number(m[1] || 0));
  },

  mode: "own",  // or "call-line": a helper's ops counted on the kernel line that calls it
  selectedFn: 0,

  // The stage text lines of the ops of statement (fn, line) in the current charge mode.
  opsOf(st, fn, line) {
    if (!this.functions || (fn === 0 && this.mode === "own")) {
      return fn === 0 ? st.lineOps[String(line)] || [] : [];
    }
    return ((this.functions.ops[this.mode] || {})[st.name] || {})[`${fn}:${line}`] || [];
  },

  // Each source row's op count (all stages) in the current charge mode.
  paintTotals() {
    for (const [key, row] of this.sourceRows) {
      const [fn, line] = key.split(":").map(Number);
      const head = this.head(line, fn);
      let total = 0;
      let headTotal = 0;
      for (const st of this.stages) {
        total += this.opsOf(st, fn, line).length;
        headTotal += this.opsOf(st, fn, head).length;
      }
      row.querySelector(".ops").textContent = total && head === line ? String(total) : "";
      row.classList.toggle("linked-line", headTotal > 0);
    }
  },

  // Measured samples tint a row's number (--heat: its samples over the hottest row's); the title says how many.
  paintHeat(rowOf, cells, total) {
    for (const [key, cell] of Object.entries(cells || {})) {
      const row = rowOf(key);
      if (!row) continue;
      const [heat, samples] = cell;
      row.classList.add("heat");
      row.style.setProperty("--heat", String(Number(heat)));
      row.title = `${+Number(samples).toFixed(2)} samples, ${(100 * samples / total).toFixed(1)}% of the profile`;
    }
  },

  // The first line of a line's statement: the ops of a statement spanning lines are its first line's.
  head(line, fn = 0) {
    const h = (this.statementOf[fn] || {})[String(line)];
    return h === undefined ? line : h;
  },

  select(clicked, fn = 0) {
    const line = this.head(clicked, fn);
    for (const old of document.querySelectorAll("#source .row.selected")) old.classList.remove("selected");
    this.selected = line;
    this.selectedFn = fn;
    for (const n of this.members.get(`${fn}:${line}`) || [line]) {
      const row = this.sourceRows.get(`${fn}:${n}`);
      if (row) row.classList.add("selected");
    }
    const named = fn === 0 || !this.functions ? "" : `${this.functions.functions[fn].name} `;
    for (const st of this.stages) {
      for (const r of st.code.querySelectorAll(".row.hit")) r.classList.remove("hit");
      const ops = this.opsOf(st, fn, line);
      let first = null;
      for (const n of ops) {
        const r = st.rows[n - 1];
        if (r) {
          r.classList.add("hit");
          if (!first) first = r;
        }
      }
      st.count.textContent = ops.length ? ` · ${ops.length} op(s) of ${named}line ${line}`
        : ` · no op of ${named}line ${line}`;
      if (first) st.code.scrollTop = first.offsetTop - st.code.offsetTop - 40;
    }
    const box = document.getElementById("lineage");
    const key = fn === 0 ? this.lineage[String(line)] : undefined;
    if (box) {
      box.hidden = !key;
      if (key) {
        document.getElementById("lineage-line").textContent = String(line);
        Pictures.url(key, this.pictures[key]).then((url) => {
          if (this.selected === line && this.selectedFn === 0) document.getElementById("lineage-img").src = url;
        });
      }
    }
    history.replaceState(null, "", fn ? `#fn=${fn}&line=${line}` : `#line=${line}`);
  },
};

const Timeline = {
  passes: [],
  chips: [],
  current: -1,

  init(passes) {
    this.passes = passes;
    const strip = document.getElementById("pass-strip");
    let stage = null;
    let group = null;
    passes.forEach((p, i) => {
      if (p.stage !== stage) {
        stage = p.stage;
        group = el("div", "stage-group");
        group.appendChild(el("span", "stage-name", stage));
        strip.appendChild(group);
      }
      const chip = el("button", "chip" + (p.changed ? " changed" : ""), String(p.index));
      chip.type = "button";
      chip.title = `#${p.index} ${p.name}` + (p.parent !== null && p.parent !== undefined ? ` (inside #${p.parent})` : "");
      if (p.depth) chip.classList.add("nested");
      chip.addEventListener("click", () => this.show(i));
      group.appendChild(chip);
      this.chips.push(chip);
    });
    document.getElementById("prev-pass").addEventListener("click", () => this.step(-1));
    document.getElementById("next-pass").addEventListener("click", () => this.step(1));
    document.addEventListener("keydown", (e) => {
      if (e.target && /INPUT|TEXTAREA|SELECT/.test(e.target.tagName)) return;
      if (e.key === "ArrowRight") { this.step(1); e.preventDefault(); }
      if (e.key === "ArrowLeft") { this.step(-1); e.preventDefault(); }
    });
    if (!passes.length) {
      document.getElementById("pass-title").textContent = "no pass snapshots captured";
      return;
    }
    const first = passes.findIndex((p) => p.changed);
    this.show(first >= 0 ? first : 0);
  },

  step(dir) {
    const only = document.getElementById("changed-only").checked;
    let i = this.current;
    do {
      i += dir;
    } while (i >= 0 && i < this.passes.length && only && !this.passes[i].changed);
    if (i >= 0 && i < this.passes.length) this.show(i);
  },

  show(i) {
    if (this.current >= 0) this.chips[this.current].classList.remove("current");
    this.current = i;
    this.chips[i].classList.add("current");
    this.chips[i].scrollIntoView({ block: "nearest", inline: "nearest" });
    const p = this.passes[i];
    document.getElementById("pass-title").textContent =
      `#${p.index} ${p.stage} · ${p.name}` + (p.argument ? ` (${p.argument})` : "") +
      (p.parent !== null && p.parent !== undefined ? ` · run inside #${p.parent} ${this.passes.find((q) => q.index === p.parent)?.name || ""}` : "");
    const secs = p.seconds === null || p.seconds === undefined ? "" : ` · ${(p.seconds * 1000).toFixed(2)} ms`;
    const summary = p.changed
      ? `${p.added} op(s) added, ${p.removed} removed, ${p.modified} changed, ${p.moved || 0} moved · ops ${p.ops_before} → ${p.ops_after}${secs}`
      : `did not change the IR${secs}`;
    document.getElementById("pass-summary").textContent = summary;
    const list = document.getElementById("pass-changes");
    list.replaceChildren();
    const d = p.diff;
    if (!d) {
      if (p.changed || p.after_known === false) list.appendChild(el("li", "note",
        "the IR on one side of this pass is not kept in a comparable form: no diff is shown"));
      return;
    }
    if (d.note) list.appendChild(el("li", "note", d.note));
    if (!d.changes.length) list.appendChild(el("li", "note",
      "no op changed: the text differs only in locations, names or spacing"));
    for (const c of d.changes) {
      const li = el("li", `change ${c.kind}`);
      li.appendChild(el("span", "kind", c.kind));
      li.appendChild(el("b", null, c.op));
      if (c.python_line) li.appendChild(el("span", "py", `py ${c.python_line}`));
      for (const side of ["before", "after"]) {
        const ref = c[side];
        if (!ref) continue;
        const div = el("div", side);
        div.appendChild(el("span", "ln", `${side} line ${ref.line}`));
        div.appendChild(el("code", null, ref.text));
        li.appendChild(div);
      }
      if (c.details.length) {
        const ul = el("ul");
        for (const t of c.details) ul.appendChild(el("li", null, t));
        li.appendChild(ul);
      }
      list.appendChild(li);
    }
    if (d.total > d.changes.length) {
      list.appendChild(el("li", "note", `${d.total - d.changes.length} more change(s): irscope diff --passes`));
    }
  },
};

const Pictures = {
  urls: {},
  // An SVG is shown only through <img> (from a blob: URL), where it can run no script.
  async url(key, pic) {
    if (!this.urls[key]) {
      // SVG rides gzip-packed; PNG (compressed already) as plain base64.
      const body = pic.mime === "image/svg+xml"
        ? await unpack(pic.data)
        : Uint8Array.from(atob(pic.data), (c) => c.charCodeAt(0));
      this.urls[key] = URL.createObjectURL(new Blob([body], { type: pic.mime }));
    }
    return this.urls[key];
  },
  async init(pictures) {
    for (const node of document.querySelectorAll("[data-picture]")) {
      const packed = pictures[node.dataset.picture];
      if (!packed) continue;
      const url = await this.url(node.dataset.picture, packed);
      if (node.tagName === "IMG") node.src = url;
      else node.href = url;
    }
  },
};

// The failure panel's link: select the line the error names in the Python pane (or
// show the PTX line a ptxas diagnostic names), scrolled into view and outlined.
const Failure = {
  init() {
    for (const a of document.querySelectorAll("#failure a[data-jump-line], #failure a[data-jump-stage]")) {
      a.addEventListener("click", (e) => {
        e.preventDefault();
        this.jump(a);
      });
    }
  },
  jump(a) {
    for (const r of document.querySelectorAll(".row.error-line")) r.classList.remove("error-line");
    let row = null;
    let box = null;
    if (a.dataset.jumpLine) {
      const line = Number(a.dataset.jumpLine);
      Linked.select(line, 0);
      row = Linked.sourceRows.get(`0:${line}`);
      box = document.getElementById("source");
    } else {
      const st = Linked.stages.find((s) => s.name === a.dataset.jumpStage);
      if (!st) return;
      row = st.rows[Number(a.dataset.jumpStageLine) - 1];
      box = st.code;
    }
    if (!row || !box) return;
    row.classList.add("error-line");
    box.scrollTop = row.offsetTop - box.offsetTop - 40;
    row.scrollIntoView({ block: "nearest" });
  },
};

async function main() {
  const node = document.getElementById("kernel-data");
  if (!node) {
    document.body.dataset.ready = "1";
    return;
  }
  const data = JSON.parse(node.textContent);
  Linked.pictures = data.pictures || {};
  await Linked.init(data);
  Failure.init();
  Timeline.init(JSON.parse(await unpack(data.passes)));
  await Pictures.init(data.pictures || {});
  document.body.dataset.ready = "1";
}

main().catch((err) => {
  document.body.dataset.ready = "error";
  const p = el("p", "note error", `the page could not start: ${err}`);
  document.querySelector("main").prepend(p);
});
