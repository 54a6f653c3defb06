// Small shared pieces of the console's UI.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText } from './api.js';

/** An error shown to the user and announced by screen readers. */
export function Alert({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="alert" role="alert">
      {errorText(error)}
    </p>
  );
}

/** Load something on mount (and on `reload()`); `deps` reload it too. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => live && (setData(d), setError(null)),
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload, setData };
}

/** Run `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean) {
  useEffect(() => {
    if (!active) return;
    const id = setInterval(fn, ms);
    return () => clearInterval(id);
  }, [active, ms, fn]);
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}

export const formatBytes = (n: number): string => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`);
export const formatDate = (iso: string): string => new Date(iso).toLocaleString();
export const formatMs = (ms: number): string => {
  const s = ms / 1000;
  return `${Math.floor(s / 60)}:${(s % 60).toFixed(1).padStart(4, '0')}`;
};

/** The id of a field's hint, for the control's aria-describedby. */
export const hintId = (id: string): string => `${id}-hint`;

/**
 * One form row of every view: the label tied to its control by `id` (pass the same id to the control), and an
 * optional hint under it (give the control `aria-describedby={hintId(id)}`).
 */
export function Field({
  id,
  label,
  hint,
  wide,
  children,
}: {
  id: string;
  label: string;
  hint?: ComponentChildren;
  wide?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class={wide ? 'field wide' : 'field'}>
      <label for={id}>{label}</label>
      {children}
      {hint !== undefined && (
        <span id={hintId(id)} class="hint">
          {hint}
        </span>
      )}
    </div>
  );
}

export interface Choice {
  value: string;
  label: string;
}

/** A labelled drop-down of choices (models, languages, translations, formats ...). */
export function SelectField(props: {
  id: string;
  label: string;
  value: string;
  choices: readonly Choice[];
  onChange: (value: string) => void;
  disabled?: boolean;
  required?: boolean;
}) {
  return (
    <Field id={props.id} label={props.label}>
      <select id={props.id} value={props.value} disabled={props.disabled} required={props.required} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </Field>
  );
}
