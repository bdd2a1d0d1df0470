/** The console shell: the key panel, the section navigation and the section on show. */
import { useState } from 'preact/hooks';

import { type Credentials, forgetCredentials, readCredentials, saveKey, chooseSignIn } from './api';
import { useHash } from './hooks';
import { CountersView } from './views/counters';
import { GatesView } from './views/gates';
import { JobsView } from './views/jobs';
import { SchedulesView } from './views/schedules';
import { SequencesView } from './views/sequences';
import { StreamsView } from './views/streams';

const sections = [
  { id: 'gates', label: 'Gates', view: GatesView },
  { id: 'schedules', label: 'Schedules', view: SchedulesView },
  { id: 'jobs', label: 'Jobs', view: JobsView },
  { id: 'streams', label: 'Streams', view: StreamsView },
  { id: 'counters', label: 'Counters', view: CountersView },
  { id: 'sequences', label: 'Sequences', view: SequencesView },
] as const;

function KeyPanel({ credentials, onChange }: { credentials: Credentials | null; onChange: () => void }) {
  const [key, setKey] = useState('');
  if (credentials !== null) {
    return (
      <div class="key-panel" role="status">
        <span>
          {credentials.mode === 'key'
            ? 'Using the admin key for this browser session.'
            : 'Sending no key (App Service authentication, or a host without keys).'}
        </span>
        <button
          type="button"
          onClick={() => {
            forgetCredentials();
            onChange();
          }}
        >
          {credentials.mode === 'key' ? 'Forget key' : 'Use a key instead'}
        </button>
      </div>
    );
  }
  return (
    <form
      class="key-panel"
      onSubmit={(e) => {
        e.preventDefault();
        if (key.trim() === '') return;
        saveKey(key.trim());
        setKey('');
        onChange();
      }}
    >
      <label for="admin-key">Admin key</label>
      <input
        id="admin-key"
        type="password"
        autocomplete="off"
        spellcheck={false}
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
        aria-describedby="admin-key-help"
      />
      <button type="submit" class="primary" disabled={key.trim() === ''}>
        Use key
      </button>
      <button
        type="button"
        class="link"
        onClick={() => {
          chooseSignIn();
          onChange();
        }}
      >
        Continue without a key
      </button>
      <p id="admin-key-help" class="hint">
        The Function App's admin (master) key, kept in this tab's session storage only and sent as <code>x-functions-key</code>. Without a
        key, requests carry only the browser's App Service sign-in (or reach a local host that has keys off).
      </p>
    </form>
  );
}

export function App() {
  const [credentials, setCredentials] = useState(readCredentials);
  const [authVersion, setAuthVersion] = useState(0);
  const hash = useHash();
  const current = sections.find((s) => s.id === hash) ?? sections[0];
  const View = current.view;
  const refreshCredentials = (): void => {
    setCredentials(readCredentials());
    setAuthVersion((v) => v + 1);
  };
  return (
    <>
      <header class="top">
        <h1>Tallyho console</h1>
        <KeyPanel credentials={credentials} onChange={refreshCredentials} />
      </header>
      <nav aria-label="Sections">
        <ul>
          {sections.map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`} aria-current={s.id === current.id ? 'page' : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">
        {credentials === null ? (
          <p class="empty">Enter the admin key to see {current.label.toLowerCase()}. Nothing is loaded until you do.</p>
        ) : (
          <View key={`${current.id}:${authVersion}`} />
        )}
      </main>
    </>
  );
}
