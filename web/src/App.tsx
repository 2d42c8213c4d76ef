// The shell: who is signed in (or the token field), the navigation, and the page the URL names.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { WhoAmI } from '../../src/server/view-api.js';
import { ApiError, errorText, getJson, getToken, onUnauthenticated, setToken } from './api.js';
import { TokenForm } from './components/Auth.js';
import { Link } from './components/Text.js';
import { Overview } from './pages/Overview.js';
import { Run } from './pages/Run.js';
import { Runs } from './pages/Runs.js';
import { Usage } from './pages/Usage.js';
import { useRoute } from './router.js';
import { displayText } from './text.js';

type Session =
  | { state: 'checking' }
  | { state: 'token'; error?: string }
  | { state: 'in'; who: WhoAmI }
  | { state: 'error'; error: string };

export function App() {
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const check = useCallback(() => {
    setSession({ state: 'checking' });
    getJson<WhoAmI>('/api/v1/whoami').then(
      (who) => setSession({ state: 'in', who }),
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 401)
          setSession({
            state: 'token',
            ...(getToken() ? { error: `The server refused this token: ${err.message}` } : {}),
          });
        else setSession({ state: 'error', error: errorText(err) });
      },
    );
  }, []);
  useEffect(check, [check]);
  useEffect(
    () =>
      onUnauthenticated(() =>
        setSession({ state: 'token', error: 'The token was refused or has expired.' }),
      ),
    [],
  );

  if (session.state === 'checking') return <p class="muted">Connecting…</p>;
  if (session.state === 'token')
    return <TokenForm onSaved={check} {...(session.error ? { error: session.error } : {})} />;
  if (session.state === 'error')
    return (
      <main>
        <h1>Lorenz</h1>
        <p role="alert" class="error">
          {session.error}
        </p>
        <button type="button" onClick={check}>
          Try again
        </button>
      </main>
    );
  return (
    <Shell
      who={session.who}
      onSignOut={() => {
        setToken(undefined);
        check();
      }}
    />
  );
}

function Shell({ who, onSignOut }: { who: WhoAmI; onSignOut: () => void }) {
  const route = useRoute();
  useEffect(() => {
    const title =
      route.page === 'run'
        ? `${route.namespace}/${route.name}`
        : route.page === 'not_found'
          ? 'Not found'
          : route.page;
    document.title = `${title} · Lorenz`;
  }, [route]);
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <nav aria-label="Pages">
          <Link href="/">Overview</Link>
          <Link href="/runs">Runs</Link>
          <Link href="/usage">Usage</Link>
        </nav>
        <span class="who">
          {displayText(who.username)}
          {who.archive ? '' : ' · archive off'}
          {who.mode === 'cluster' && (
            <button type="button" onClick={onSignOut}>
              Forget token
            </button>
          )}
        </span>
      </header>
      <div id="content">
        {route.page === 'overview' && <Overview />}
        {route.page === 'runs' && <Runs filters={route.filters} />}
        {route.page === 'run' && (
          <Run
            namespace={route.namespace}
            name={route.name}
            {...(route.uid ? { uid: route.uid } : {})}
          />
        )}
        {route.page === 'usage' && <Usage filters={route.filters} />}
        {route.page === 'not_found' && (
          <main>
            <h1>Not found</h1>
            <p>No page at {displayText(route.path)}.</p>
          </main>
        )}
      </div>
    </>
  );
}
