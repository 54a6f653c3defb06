import { useState } from 'preact/hooks';
import { signIn } from '../lib/api.js';
import { Alert } from '../lib/ui.js';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(key.trim());
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Parlance console</h1>
      <p>Speech to text and text to speech on your own server. Sign in with an API key of your project.</p>
      <form onSubmit={submit} class="card">
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <p class="hint">Kept in this tab's session storage only. Actions taken here are counted as playground usage.</p>
        <button type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <Alert error={error} />
      </form>
    </main>
  );
}
