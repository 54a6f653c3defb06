// Usage: balance, monthly usage against budgets, concurrency now and the concurrent-streams history, and the
// project's API keys (listed and revoked when this key may: organization permissions).
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { BarChart, Gauge } from '../lib/chart.js';
import { Alert, formatDate, Section, SelectField, useLoad } from '../lib/ui.js';

interface Balance {
  available_balance_usd: string;
  free_balance_usd: string;
  used_balance_usd: string;
  invoice_billing_enabled: boolean;
  balance_exhausted: boolean;
}

interface MonthlyUsage {
  month: string;
  usage_usd: string;
  api_usage_usd: string;
  playground_usage_usd: string;
  monthly_budget_usd: string | null;
  remaining_budget_usd: string | null;
  budget_exhausted: boolean | null;
  projects: { id: string; name: string; usage_usd: string; api_usage_usd: string; playground_usage_usd: string; monthly_budget_usd: string | null }[];
}

interface Counts {
  transcribe_concurrent: number;
  tts_concurrent: number;
}
interface Concurrency {
  project: { current: Counts; limits: Counts };
  organization: { current: Counts; limits: Counts };
}

interface HistoryEntry {
  period_start: string;
  sample_max: number;
}

interface ApiKey {
  id: string;
  key_prefix: string;
  name: string;
  permissions: string[];
  created_at: string;
}

const usd = (s: string | null | undefined) => (s === null || s === undefined ? '—' : `$${Number(s).toFixed(4)}`);

function months(): string[] {
  const now = new Date();
  return [0, 1, 2, 3, 4, 5].map((i) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7));
}

function BalanceCard() {
  const b = useLoad(() => api<Balance>('/v1/organization/balance'));
  return (
    <Section title="Balance">
      <Alert error={b.error} />
      {b.data && (
        <dl class="facts">
          <dt>Available</dt>
          <dd>{usd(b.data.available_balance_usd)}</dd>
          <dt>Of which granted</dt>
          <dd>{usd(b.data.free_balance_usd)}</dd>
          <dt>Used</dt>
          <dd>{usd(b.data.used_balance_usd)}</dd>
          <dt>Billing</dt>
          <dd>{b.data.invoice_billing_enabled ? 'invoiced' : b.data.balance_exhausted ? 'prepaid, exhausted' : 'prepaid'}</dd>
        </dl>
      )}
    </Section>
  );
}

function MonthlyCard() {
  const [month, setMonth] = useState(months()[0]!);
  const m = useLoad(() => api<MonthlyUsage>('/v1/organization/usage/monthly', { query: { month } }), [month]);
  const d = m.data;
  return (
    <Section title="Monthly usage">
      <SelectField id="usage-month" label="Month" value={month} choices={months().map((x) => ({ value: x, label: x }))} onChange={setMonth} />
      <Alert error={m.error} />
      {d && (
        <>
          <dl class="facts" aria-label="Usage this month">
            <dt>Total</dt>
            <dd data-testid="usage-total">{usd(d.usage_usd)}</dd>
            <dt>API</dt>
            <dd data-testid="usage-api">{usd(d.api_usage_usd)}</dd>
            <dt>Playground</dt>
            <dd data-testid="usage-playground">{usd(d.playground_usage_usd)}</dd>
            <dt>Budget</dt>
            <dd>
              {d.monthly_budget_usd ? `${usd(d.monthly_budget_usd)} (${usd(d.remaining_budget_usd)} left${d.budget_exhausted ? ', exhausted' : ''})` : 'none'}
            </dd>
          </dl>
          {d.monthly_budget_usd && (
            <Gauge
              label="Budget used"
              value={Number(d.usage_usd)}
              max={Number(d.monthly_budget_usd)}
              text={`${usd(d.usage_usd)} of ${usd(d.monthly_budget_usd)}`}
            />
          )}
          <BarChart
            title="Usage by source (USD)"
            bars={[
              { label: 'API', value: Number(d.api_usage_usd) },
              { label: 'Playground', value: Number(d.playground_usage_usd) },
            ]}
          />
          {d.projects.length > 0 && <BarChart title="Usage by project (USD)" bars={d.projects.map((p) => ({ label: p.name, value: Number(p.usage_usd) }))} />}
        </>
      )}
    </Section>
  );
}

function ConcurrencyCard() {
  const c = useLoad(() => api<Concurrency>('/v1/concurrency-limits'));
  const hours = 24;
  const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
  const start = new Date(end.getTime() - hours * 3_600_000);
  const history = (kind: 'stt' | 'tts') =>
    api<{ entries: HistoryEntry[] }>('/v1/concurrent-streams-history', {
      query: { kind, period_sec: 3600, start_time: start.toISOString(), end_time: end.toISOString() },
    });
  const stt = useLoad(() => history('stt'));
  const tts = useLoad(() => history('tts'));
  const bars = (entries: HistoryEntry[] | undefined) => (entries ?? []).map((e) => ({ label: `${e.period_start.slice(11, 16)}`, value: e.sample_max }));
  return (
    <Section title="Concurrency">
      <Alert error={c.error ?? stt.error ?? tts.error} />
      {c.data && (
        <div class="gauges">
          <Gauge
            label="Project live transcription streams"
            value={c.data.project.current.transcribe_concurrent}
            max={c.data.project.limits.transcribe_concurrent}
            text={`${c.data.project.current.transcribe_concurrent} of ${c.data.project.limits.transcribe_concurrent}`}
          />
          <Gauge
            label="Project TTS streams"
            value={c.data.project.current.tts_concurrent}
            max={c.data.project.limits.tts_concurrent}
            text={`${c.data.project.current.tts_concurrent} of ${c.data.project.limits.tts_concurrent}`}
          />
          <Gauge
            label="Organization live transcription streams"
            value={c.data.organization.current.transcribe_concurrent}
            max={c.data.organization.limits.transcribe_concurrent}
            text={`${c.data.organization.current.transcribe_concurrent} of ${c.data.organization.limits.transcribe_concurrent}`}
          />
          <Gauge
            label="Organization TTS streams"
            value={c.data.organization.current.tts_concurrent}
            max={c.data.organization.limits.tts_concurrent}
            text={`${c.data.organization.current.tts_concurrent} of ${c.data.organization.limits.tts_concurrent}`}
          />
        </div>
      )}
      {stt.data && <BarChart title="Live transcription streams, peak per hour (last 24 h, UTC)" bars={bars(stt.data.entries)} />}
      {tts.data && <BarChart title="TTS streams, peak per hour (last 24 h, UTC)" bars={bars(tts.data.entries)} />}
    </Section>
  );
}

function KeysCard() {
  const projects = useLoad(() => api<{ projects: { id: string; name: string }[] }>('/v1/organization/projects'));
  const [projectId, setProjectId] = useState('');
  const project = projectId || projects.data?.projects[0]?.id || '';
  const keys = useLoad(
    () => (project ? api<{ api_keys: ApiKey[] }>(`/v1/organization/projects/${project}/api-keys`) : Promise.resolve({ api_keys: [] })),
    [project],
  );
  const [error, setError] = useState<unknown>(null);
  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke the key ${k.name} (${k.key_prefix}…)? Requests made with it will be refused.`)) return;
    try {
      await api(`/v1/organization/projects/${project}/api-keys/${k.id}`, { method: 'DELETE' });
      setError(null);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Section title="API keys">
      <Alert error={projects.error ?? keys.error ?? error} />
      {projects.data && (
        <SelectField
          id="usage-project"
          label="Project"
          value={project}
          choices={projects.data.projects.map((p) => ({ value: p.id, label: p.name }))}
          onChange={setProjectId}
        />
      )}
      <ul class="rows" aria-label="API keys">
        {keys.data?.api_keys.map((k) => (
          <li key={k.id}>
            <span class="name">{k.name}</span>
            <span class="meta">
              <code>{k.key_prefix}…</code> · {k.permissions.join(', ') || 'all permissions'} · {formatDate(k.created_at)}
            </span>
            <span class="actions">
              <button type="button" class="danger" aria-label={`Revoke ${k.name}`} onClick={() => void revoke(k)}>
                Revoke
              </button>
            </span>
          </li>
        ))}
      </ul>
    </Section>
  );
}

export function UsageView() {
  return (
    <>
      <h1>Usage</h1>
      <div class="grid-2">
        <BalanceCard />
        <MonthlyCard />
      </div>
      <ConcurrencyCard />
      <KeysCard />
    </>
  );
}
