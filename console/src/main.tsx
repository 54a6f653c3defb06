// The Parlance web console: sign in with an API key, then files, transcriptions, live transcription, text-to-speech,
// cloned voices, usage and the server's models. Hash routes (#/files, ...) so the server serves one index.html.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { SIGNED_OUT_EVENT, signedIn, signOut } from './lib/api.js';
import './styles.css';
import { FilesView } from './views/files.js';
import { LiveView } from './views/live.js';
import { ModelsView } from './views/models.js';
import { SignIn } from './views/sign-in.js';
import { TranscriptView } from './views/transcript.js';
import { TranscriptionsView } from './views/transcriptions.js';
import { TtsView } from './views/tts.js';
import { UsageView } from './views/usage.js';
import { VoicesView } from './views/voices.js';

const pages = [
  { path: 'files', label: 'Files' },
  { path: 'transcriptions', label: 'Transcriptions' },
  { path: 'live', label: 'Live' },
  { path: 'tts', label: 'Text to speech' },
  { path: 'voices', label: 'Cloned voices' },
  { path: 'usage', label: 'Usage' },
  { path: 'models', label: 'Models' },
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash.replace(/^#\/?/, '');
}

function Page({ route }: { route: string }) {
  const [page, id] = (route.split('?')[0] ?? '').split('/');
  switch (page) {
    case 'transcriptions':
      return id ? <TranscriptView id={decodeURIComponent(id)} /> : <TranscriptionsView />;
    case 'live':
      return <LiveView />;
    case 'tts':
      return <TtsView />;
    case 'voices':
      return <VoicesView />;
    case 'usage':
      return <UsageView />;
    case 'models':
      return <ModelsView />;
    default:
      return <FilesView />;
  }
}

function App() {
  const [authed, setAuthed] = useState(signedIn());
  const route = useHash();
  const current = route.split(/[/?]/)[0] || 'files';
  useEffect(() => {
    const onSignedOut = () => setAuthed(false);
    addEventListener(SIGNED_OUT_EVENT, onSignedOut);
    return () => removeEventListener(SIGNED_OUT_EVENT, onSignedOut);
  }, []);
  useEffect(() => {
    const label = pages.find((p) => p.path === current)?.label ?? 'Files';
    document.title = authed ? `${label} · Parlance console` : 'Sign in · Parlance console';
  }, [current, authed]);
  if (!authed) return <SignIn onSignedIn={() => setAuthed(true)} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Parlance</span>
        <nav aria-label="Console">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <a href={`#/${p.path}`} aria-current={current === p.path ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="link"
          onClick={() => {
            signOut();
            setAuthed(false);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
