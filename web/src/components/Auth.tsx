// No login form of the server's own: in the cluster the browser presents a Kubernetes
// bearer token, which `lorenz server` checks with TokenReview and SubjectAccessReviews.
import { useState } from 'preact/hooks';
import { setToken } from '../api.js';

export function TokenForm({ onSaved, error }: { onSaved: () => void; error?: string }) {
  const [value, setValue] = useState('');
  return (
    <main class="token">
      <h1>Lorenz</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const token = value.trim();
          if (!token) return;
          setToken(token);
          onSaved();
        }}
      >
        <label for="token">Paste a Kubernetes bearer token</label>
        <textarea
          id="token"
          rows={4}
          autocomplete="off"
          spellcheck={false}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          aria-describedby="token-hint"
        />
        <p id="token-hint" class="hint">
          For a ServiceAccount: <code>kubectl create token &lt;serviceaccount&gt;</code>; or your
          cluster's OIDC id token. It is kept in this tab only (sessionStorage) and sent as{' '}
          <code>Authorization: Bearer</code>; what you may see and do is what your RBAC allows.
        </p>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit">Use token</button>
      </form>
    </main>
  );
}
