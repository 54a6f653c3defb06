// A small SVG bar chart (no chart library: the console stays small and offline). The figure names itself for
// screen readers, and the numbers are in a table under "Show data".

export interface Bar {
  label: string;
  value: number;
}

export function BarChart({ bars, title, unit = '' }: { bars: Bar[]; title: string; unit?: string }) {
  const max = Math.max(1, ...bars.map((b) => b.value));
  const w = 600;
  const h = 140;
  const barW = w / Math.max(1, bars.length);
  const peak = bars.reduce((a, b) => (b.value > a.value ? b : a), bars[0] ?? { label: '', value: 0 });
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${w} ${h + 20}`}
        role="img"
        aria-label={`${title}: ${bars.length} bars, highest ${peak.value}${unit} at ${peak.label}`}
        preserveAspectRatio="none"
      >
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        {bars.map((b, i) => {
          const bh = (b.value / max) * (h - 10);
          return (
            <rect key={i} x={i * barW + barW * 0.1} y={h - bh} width={barW * 0.8} height={bh} class="bar">
              <title>{`${b.label}: ${b.value}${unit}`}</title>
            </rect>
          );
        })}
        <text x={0} y={h + 16} class="tick">
          {bars[0]?.label}
        </text>
        <text x={w} y={h + 16} class="tick" text-anchor="end">
          {bars[bars.length - 1]?.label}
        </text>
        <text x={w} y={12} class="tick" text-anchor="end">
          max {max}
          {unit}
        </text>
      </svg>
      <figcaption>{title}</figcaption>
      <details>
        <summary>Show data</summary>
        <table>
          <tbody>
            {bars.map((b, i) => (
              <tr key={i}>
                <th scope="row">{b.label}</th>
                <td>
                  {b.value}
                  {unit}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** One value against its limit, as a labelled meter. */
export function Gauge({ label, value, max, text }: { label: string; value: number; max: number; text: string }) {
  const id = `gauge-${label.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <div class="gauge">
      <label for={id}>{label}</label>
      <meter id={id} min={0} max={Math.max(max, value, 1e-9)} value={value} />
      <span>{text}</span>
    </div>
  );
}
