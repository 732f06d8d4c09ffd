/**
 * @module An agent's results over time, drawn with uPlot on a canvas: each
 * verification's overall ratio as a point, and the pass rate so far as a line,
 * oldest first. The x axis counts verifications rather than clock time, so that
 * a burst within one second stays readable; the legend shows each one's time.
 * The same numbers are in the history table below it, for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartPoint {
  verifiedAt: string;
  overall: number;
  pass: boolean;
}

function colors() {
  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  return dark
    ? { axis: '#c9d1d9', grid: '#30363d', ratio: '#79c0ff', rate: '#56d364' }
    : { axis: '#1f2328', grid: '#d0d7de', ratio: '#0550ae', rate: '#1a7f37' };
}

/** `points` oldest first. */
export function ResultsChart({ points }: { points: ChartPoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || points.length === 0) return;
    const sorted = points;
    let passes = 0;
    const rate = sorted.map((p, i) => {
      if (p.pass) passes++;
      return passes / (i + 1);
    });
    const c = colors();
    const axis = { stroke: c.axis, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid } };
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 260,
        scales: { x: { time: false }, y: { range: [0, 1] } },
        axes: [
          { ...axis, label: 'Verification (oldest first)', values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? String(v) : '')) },
          { ...axis, values: (_u, vals) => vals.map((v) => `${Math.round(v * 100)}%`) },
        ],
        series: [
          { label: 'Verified at', value: (_u, v) => (v == null ? '--' : `#${v} ${sorted[v - 1]?.verifiedAt ?? ''}`) },
          { label: 'Overall ratio', stroke: c.ratio, width: 0, points: { show: true, size: 7, fill: c.ratio } },
          { label: 'Pass rate so far', stroke: c.rate, width: 2, points: { show: false } },
        ],
      },
      [sorted.map((_p, i) => i + 1), sorted.map((p) => p.overall), rate],
      el,
    );
    const onResize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 });
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [points]);
  return <div class="chart" ref={box} role="img" aria-label={`Chart of ${points.length} verifications: overall ratio of each and the pass rate so far, over time`} />;
}
