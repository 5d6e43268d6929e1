import type { ClusterTrend } from './trend.js';

const WIDTH = 360;
const HEIGHT = 110;
const PAD = { left: 34, right: 6, top: 8, bottom: 18 };
/** Colour per remote, in the order of the remotes' names; the legend says which is which. */
const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface Series {
  readonly remote: string;
  readonly values: readonly (number | null)[];
}

/** One small line chart: a polyline per remote over the hour, gaps where nothing was counted. */
function lineChart(id: string, title: string, series: readonly Series[], colourOf: (remote: string) => string): string {
  const points = series.flatMap((line) => line.values.filter((value): value is number => value !== null));
  const max = Math.max(1, ...points);
  const slots = series[0]?.values.length ?? 1;
  const x = (i: number): number => PAD.left + (i * (WIDTH - PAD.left - PAD.right)) / Math.max(1, slots - 1);
  const y = (value: number): number => PAD.top + (1 - value / max) * (HEIGHT - PAD.top - PAD.bottom);
  const lines = series
    .map((line) => {
      // A gap (a minute no node counted) starts a new segment instead of drawing through it.
      const segments: [number, number][][] = [[]];
      line.values.forEach((value, i) => {
        if (value === null) segments.push([]);
        else segments.at(-1)!.push([x(i), y(value)]);
      });
      const colour = colourOf(line.remote);
      // A lone minute has no line to draw: it is a dot.
      const drawn = segments
        .filter((segment) => segment.length > 0)
        .map((segment) =>
          segment.length === 1
            ? `<circle cx="${segment[0]![0].toFixed(1)}" cy="${segment[0]![1].toFixed(1)}" r="2" fill="${colour}"/>`
            : `<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${segment.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ')}"/>`,
        )
        .join('');
      const values = line.values.map((value) => (value === null ? '' : String(value))).join(',');
      return `<g class="series" data-remote="${escapeXml(line.remote)}" data-values="${values}">${drawn}</g>`;
    })
    .join('');
  const axis =
    `<line x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}" stroke="#9ca3af"/>` +
    `<text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end" class="axis">${max}</text>` +
    `<text x="${PAD.left - 4}" y="${HEIGHT - PAD.bottom}" text-anchor="end" class="axis">0</text>` +
    `<text x="${PAD.left}" y="${HEIGHT - 4}" class="axis">-60 min</text>` +
    `<text x="${WIDTH - PAD.right}" y="${HEIGHT - 4}" text-anchor="end" class="axis">now</text>`;
  const body = series.length === 0 ? `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" class="axis">no data yet</text>` : lines;
  return (
    `<figure class="chart"><figcaption>${escapeXml(title)}</figcaption>` +
    `<svg id="${id}" role="img" aria-label="${escapeXml(title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${escapeXml(title)}</title>${axis}${body}</svg></figure>`
  );
}

/** The page's three charts of the last hour (waiting tasks, pushes and failed pushes per minute, per remote) and their legend. */
export function renderTrendCharts(trend: ClusterTrend): string {
  const colourOf = (remote: string): string => PALETTE[Math.max(0, trend.remotes.indexOf(remote)) % PALETTE.length]!;
  const zeros = trend.minutes.map(() => 0);
  // A remote with pushes but no failure has a flat failure line: every remote is in the push charts.
  const counted = (table: Readonly<Record<string, readonly number[]>>): Series[] => trend.remotes.map((remote) => ({ remote, values: table[remote] ?? zeros }));
  const legend = trend.remotes
    .map((remote) => `<span class="legend"><span class="swatch" style="background:${colourOf(remote)}"></span>${escapeXml(remote)}</span>`)
    .join(' ');
  return (
    `<div class="charts">` +
    lineChart(
      'chart-waiting',
      'Waiting tasks',
      trend.remotes.filter((remote) => trend.waiting[remote] !== undefined).map((remote) => ({ remote, values: trend.waiting[remote]! })),
      colourOf,
    ) +
    lineChart('chart-pushes', 'Pushes per minute', counted(trend.pushes), colourOf) +
    lineChart('chart-failures', 'Failed pushes per minute', counted(trend.failures), colourOf) +
    `</div><p id="chart-legend">${legend}</p>`
  );
}
