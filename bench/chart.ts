import type { ReplayRow } from "./sections.js";

/** An SVG line chart of server CPU per whole call against rounds (log-log), six series. */
export function replayChart(rows: ReplayRow[], title: string): string {
  const W = 760;
  const H = 400;
  const m = { l: 70, r: 230, t: 40, b: 50 };
  const series: Array<[string, string, (r: ReplayRow) => number]> = [
    ["(a) generator, live", "#1f77b4", (r) => r.us.generatorLive],
    ["(a) generator, stateless", "#9467bd", (r) => r.us.generatorStateless],
    ["(b) hand-written { i, sum }", "#2ca02c", (r) => r.us.handWritten],
    ["(b2) hand-written, all answers", "#8c564b", (r) => r.us.handWrittenAll],
    ["(c) SDK inputRequired + codec", "#d62728", (r) => r.us.sdk],
    ["(f) replay floor (no runtime)", "#7f7f7f", (r) => r.us.replayFloor],
  ];
  const xs = rows.map((r) => r.rounds);
  const ys = rows.flatMap((r) => series.map(([, , f]) => f(r)));
  const lx = (v: number) => Math.log10(v);
  const [x0, x1] = [lx(Math.min(...xs)), lx(Math.max(...xs))];
  const [y0, y1] = [Math.floor(lx(Math.min(...ys))), Math.ceil(lx(Math.max(...ys)))];
  const px = (v: number) => m.l + ((lx(v) - x0) / (x1 - x0 || 1)) * (W - m.l - m.r);
  const py = (v: number) => H - m.b - ((lx(v) - y0) / (y1 - y0 || 1)) * (H - m.t - m.b);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2 - 60}" y="22" font-size="14" text-anchor="middle">${title}</text>`);
  for (let e = y0; e <= y1; e++) {
    const y = py(10 ** e);
    out.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${m.l - 8}" y="${y + 4}" text-anchor="end">${10 ** e >= 1000 ? `${10 ** e / 1000} ms` : `${10 ** e} µs`}</text>`,
    );
  }
  for (const x of xs) out.push(`<line x1="${px(x)}" x2="${px(x)}" y1="${m.t}" y2="${H - m.b}" stroke="#eee"/><text x="${px(x)}" y="${H - m.b + 18}" text-anchor="middle">${x}</text>`);
  out.push(`<text x="${(m.l + W - m.r) / 2}" y="${H - 12}" text-anchor="middle">R = asks per call (a call is R + 1 requests)</text>`);
  out.push(`<text x="16" y="${(m.t + H - m.b) / 2}" transform="rotate(-90 16 ${(m.t + H - m.b) / 2})" text-anchor="middle">server CPU per whole call</text>`);
  series.forEach(([name, color, f], i) => {
    const pts = rows.map((r) => `${px(r.rounds).toFixed(1)},${py(f(r)).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/>`);
    for (const r of rows) out.push(`<circle cx="${px(r.rounds).toFixed(1)}" cy="${py(f(r)).toFixed(1)}" r="3" fill="${color}"/>`);
    out.push(`<rect x="${W - m.r + 12}" y="${m.t + i * 22}" width="14" height="3" fill="${color}"/><text x="${W - m.r + 32}" y="${m.t + i * 22 + 5}">${name}</text>`);
  });
  out.push("</svg>");
  return out.join("\n");
}
