// The episode page's controls: the step slider and play/pause drive the drawing (the Vega signal
// `step`) and the panel of the chosen agent. Every text goes into the page as textContent, never as
// markup: a model's reply shows as what it is.
"use strict";
const episode = JSON.parse(document.getElementById("episode-data").textContent);
const spec = JSON.parse(document.getElementById("episode-spec").textContent);
const slider = document.getElementById("step");
const label = document.getElementById("step-label");
const chooser = document.getElementById("agent");
const panel = document.getElementById("panel");
const playButton = document.getElementById("play");
const columns = episode.agents;
const names = Object.keys(columns);
const rowOf = new Map(); // "step:agent" -> row index
columns.step.forEach((step, i) => rowOf.set(`${step}:${columns.agent[i]}`, i));
const HIDDEN = new Set(["step", "agent", "call_keys", ...episode.long]);
// On clocks or under churn (hivebench.perturb) the chosen agent's events: the calls it started (asked
// on a snapshot) and completed (a decision applied), its leaving and coming back, each in the round
// that led to a state; the event buttons step through them instead of through every state.
const EVENTFUL = ["asked", "staleness", "present"].some((c) => c in columns);
let view = null;
let step = 0;
let agent = 0;
let timer = null;

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function shown(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number" && !Number.isInteger(value)) return value.toPrecision(4);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function agentName(a) {
  const i = rowOf.get(`0:${a}`);
  return columns.name && i !== undefined ? `${a} (${columns.name[i]})` : String(a);
}

// The rows of a side table sent by `a` in round `t` (sender or writer), or received by it.
function sideRows(table, key, a, t) {
  const found = [];
  if (!table[key]) return found;
  table.step.forEach((s, i) => {
    if (s === t && table[key][i] === a) found.push(i);
  });
  return found;
}

function sideTable(title, table, rows, other) {
  const box = element("section", null, "side");
  box.appendChild(element("h3", `${title} (${rows.length})`));
  if (!rows.length) return box;
  const list = element("ul");
  for (const i of rows.slice(0, 200)) {
    const peer = other && table[other] ? table[other][i] : null;
    const who = peer === null || peer === undefined || peer < 0 ? "everyone in range" : agentName(peer);
    const text = table.text ? table.text[i] : Object.keys(table).filter((c) => c !== "step").map((c) => `${c} ${shown(table[c][i])}`).join(", ");
    const item = element("li");
    item.appendChild(element("span", `${other === "receiver" ? "to" : "from"} ${who}: `, "peer"));
    item.appendChild(element("span", text, "message"));
    list.appendChild(item);
  }
  if (rows.length > 200) list.appendChild(element("li", `… and ${rows.length - 200} more`));
  box.appendChild(list);
  return box;
}

function callSection(key, index) {
  const box = element("section", null, "call");
  box.appendChild(element("h3", index === 0 ? "model call" : "repair call"));
  const call = episode.calls[key];
  if (!call) {
    box.appendChild(element("p", `cache key ${key}: not in this cell's response cache`));
    return box;
  }
  for (const message of call.messages) {
    box.appendChild(element("h4", message.role));
    box.appendChild(element("pre", message.content, "prompt"));
  }
  box.appendChild(element("h4", "reply"));
  box.appendChild(element("pre", call.result.text, "reply"));
  const usage = call.result.usage;
  box.appendChild(element("p", `${usage.input_tokens} input / ${usage.output_tokens} output tokens, ${usage.latency_s.toFixed(3)} s, ${usage.retries} retries`));
  if (!call.messages.length) box.appendChild(element("p", "(the prompt was cached before hivebench kept prompts)"));
  return box;
}

function eventsAt(a, t) {
  const i = rowOf.get(`${t}:${a}`);
  if (t === 0 || i === undefined) return [];
  const out = [];
  if (columns.asked && columns.asked[i]) out.push(`asked on state ${t - 1}`);
  if (columns.staleness && columns.staleness[i] !== null) {
    out.push(`applied its decision asked on state ${t - 1 - columns.staleness[i]}`);
  }
  const before = rowOf.get(`${t - 1}:${a}`);
  if (columns.present && before !== undefined && columns.present[before] !== columns.present[i]) {
    out.push(columns.present[i] ? "came back" : "left");
  }
  return out;
}

function stepEvent(direction) {
  for (let t = step + direction; t >= 0 && t <= episode.steps; t += direction) {
    if (eventsAt(agent, t).length) {
      show(t);
      return;
    }
  }
}

function fillPanel() {
  panel.replaceChildren();
  const i = rowOf.get(`${step}:${agent}`);
  panel.appendChild(element("h2", `agent ${agentName(agent)}, state ${step}`));
  if (EVENTFUL) {
    const events = eventsAt(agent, step);
    panel.appendChild(element("p", events.length ? `events: ${events.join("; ")}` : "no event", "events"));
  }
  if (i === undefined) {
    panel.appendChild(element("p", "no row for this agent at this state (it has left)"));
    return;
  }
  const fields = element("table", null, "fields");
  for (const name of names) {
    if (HIDDEN.has(name)) continue;
    const row = element("tr");
    row.appendChild(element("th", name));
    row.appendChild(element("td", shown(columns[name][i])));
    fields.appendChild(row);
  }
  panel.appendChild(fields);
  for (const name of episode.long) {
    panel.appendChild(element("h3", name));
    panel.appendChild(element("pre", shown(columns[name][i]), `text ${name}`));
  }
  for (const [name, table] of Object.entries(episode.tables)) {
    const sender = table.sender ? "sender" : table.writer ? "writer" : null;
    if (!sender) continue;
    panel.appendChild(sideTable(`${name} sent in round ${step}`, table, sideRows(table, sender, agent, step), "receiver"));
    if (table.receiver && step > 0) {
      panel.appendChild(sideTable(`${name} received from round ${step - 1}`, table, sideRows(table, "receiver", agent, step - 1), sender));
    }
  }
  const keys = columns.call_keys ? columns.call_keys[i] : null;
  if (keys && keys.length) {
    keys.forEach((key, k) => panel.appendChild(callSection(key, k)));
  } else if (columns.reply && columns.reply[i] !== null && !episode.cached) {
    panel.appendChild(element("p", "the prompt is not on record: this backend's replies are not cached"));
  }
}

function show(t) {
  step = Math.max(0, Math.min(episode.steps, t));
  slider.value = String(step);
  label.textContent = `state ${step} of ${episode.steps}`;
  // the drawing says which state it shows once it has drawn it (the tests wait for it)
  if (view) view.signal("step", step).runAsync().then(() => { document.body.dataset.shown = String(step); });
  fillPanel();
}

function choose(a) {
  agent = a;
  chooser.value = String(a);
  fillPanel();
}

function play() {
  if (timer !== null) {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "play";
    return;
  }
  if (step >= episode.steps) show(0);
  playButton.textContent = "pause";
  timer = setInterval(() => {
    show(step + 1);
    if (step >= episode.steps) play(); // stop at the last state
  }, 400);
}

for (let a = 0; a < episode.n; a++) {
  const option = element("option", agentName(a));
  option.value = String(a);
  chooser.appendChild(option);
}
slider.addEventListener("input", () => show(Number(slider.value)));
chooser.addEventListener("change", () => choose(Number(chooser.value)));
playButton.addEventListener("click", play);
if (EVENTFUL) {
  document.getElementById("previous-event").addEventListener("click", () => stepEvent(-1));
  document.getElementById("next-event").addEventListener("click", () => stepEvent(1));
}
show(0);
vegaEmbed("#scene", spec, { actions: false, renderer: "svg" }).then((result) => {
  view = result.view;
  view.addEventListener("click", (event, item) => {
    if (item && item.datum && typeof item.datum.agent === "number") choose(item.datum.agent);
  });
  show(step);
  document.body.dataset.ready = "true";
});
