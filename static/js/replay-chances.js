// Who's winning over the whole battle, under the replay's scrubber (issue 37): each side's chance to
// win at every step, as the live updates worked it out and kept it (the server sends it with each
// step: `step.chances`), and a marker that follows the step shown. Drawn as SVG; nothing is worked
// out here. Styles: static/css/chances.css.
import { h } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = { A: "#4aa3ff", B: "#ff7a45", C: "#c08cff", D: "#3ecf8e" };

function svg(name, attrs = {}) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** mountChanceLine(after, steps): the chart, put after the `after` element; null without chances. */
export function mountChanceLine(after, steps) {
  if (!steps.some((s) => s.chances)) return null;
  (function linkStyles() {
    const href = new URL("../css/chances.css", import.meta.url).href;
    if (!document.querySelector(`link[href="${href}"]`)) document.head.append(h("link", { rel: "stylesheet", href }));
  })();
  const last = [...steps].reverse().find((s) => s.chances).chances;
  const sides = last.sides.map((s) => ({ side: s.side, name: s.name }));
  const n = Math.max(1, steps.length - 1);
  const chart = svg("svg", { viewBox: `0 0 ${n} 100`, preserveAspectRatio: "none", class: "r-chances-svg", role: "img",
    "aria-label": `Chance to win over the battle: ${sides.map((s) => s.name).join(" against ")}` });
  chart.append(svg("line", { x1: 0, x2: n, y1: 50, y2: 50, class: "r-chances-even" }));
  for (const { side } of sides) {
    let known = null;
    const points = steps.map((step, i) => {
      const found = step.chances && step.chances.sides.find((s) => s.side === side);
      if (found) known = found.p;
      return known === null ? null : `${i},${(100 - known * 100).toFixed(1)}`;
    }).filter(Boolean);
    chart.append(svg("polyline", { points: points.join(" "), fill: "none", stroke: COLOURS[side] || "#aaa", "stroke-width": 2.5,
      "vector-effect": "non-scaling-stroke", "data-side": side, class: `r-chances-line r-chances-${side}` }));
  }
  const marker = svg("line", { x1: 0, x2: 0, y1: 0, y2: 100, class: "r-chances-marker", "vector-effect": "non-scaling-stroke" });
  chart.append(marker);
  const words = h("p", { class: "r-chances-words", "aria-live": "polite", dataset: { testid: "replay-chances-words" } });
  const box = h("figure", { class: "r-chances", dataset: { testid: "replay-chances" } },
    h("figcaption", { class: "r-chances-title" }, "Chance to win, step by step ",
      ...sides.map((s) => h("span", { class: `r-chances-key chances-side-${s.side}` }, s.name))),
    chart, words);
  after.after(box);
  return {
    mark(index) {
      marker.setAttribute("x1", String(index));
      marker.setAttribute("x2", String(index));
      box.dataset.index = String(index);
      const at = [...steps.slice(0, index + 1)].reverse().find((s) => s.chances);
      const parts = at ? at.chances.sides.map((s) => `${s.name} ${Math.round(s.p * 100)} %`) : [];
      if (at && at.chances.draw > 0.005) parts.push(`draw ${Math.round(at.chances.draw * 100)} %`);
      if (at && at.chances.none > 0.005) parts.push(`no winner ${Math.round(at.chances.none * 100)} %`);
      words.textContent = parts.join(" · ");
    },
  };
}
