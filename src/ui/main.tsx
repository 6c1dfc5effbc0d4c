/**
 * Boot: inside a host that renders MCP Apps (the page was loaded from the `ui://` resource, marked
 * by `<meta name="reservoir-mode" content="app">`) the page talks through the App bridge; otherwise
 * it is a client of this origin's /mcp. A server that wants a token gets a token form; the token
 * lives in sessionStorage only (this tab, until it closes) and goes out in the Authorization header.
 */
import './jitless';
import { render } from 'preact';
import { useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { App } from './App';
import { DataError, type DataSource } from './data';

const TOKEN_KEY = 'reservoir.token';

function Login({
  onToken,
  message,
}: {
  onToken(token: string): void;
  message: string;
}): JSX.Element {
  const [token, setToken] = useState('');
  return (
    <form
      class="login"
      onSubmit={(event) => {
        event.preventDefault();
        onToken(token.trim());
      }}
    >
      <h1>Reservoir</h1>
      <p>{message}</p>
      <label class="field">
        <span>Bearer token</span>
        <input
          type="password"
          name="token"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit">Connect</button>
    </form>
  );
}

/**
 * Renders into `root`, removing index.html's "Loading…" placeholder on the first call: Preact does
 * not take over markup it did not make, so the placeholder would stay above the app.
 */
function mounter(root: HTMLElement): (node: JSX.Element) => void {
  let placeholder = true;
  return (node) => {
    if (placeholder) root.replaceChildren();
    placeholder = false;
    render(node, root);
  };
}

async function boot(root: HTMLElement): Promise<void> {
  const show = mounter(root);
  const mode = document.querySelector('meta[name="reservoir-mode"]')?.getAttribute('content');
  if (mode === 'app') {
    const { connectApp } = await import('./data-app');
    show(<App data={await connectApp()} />);
    return;
  }
  const { connectHttp } = await import('./data-http');
  const endpoint = new URL('/mcp', location.origin);
  const attempt = async (token: string | undefined, failed?: string): Promise<void> => {
    let data: DataSource;
    try {
      data = await connectHttp(endpoint, token);
    } catch (error) {
      if (
        error instanceof DataError &&
        (error.kind === 'unauthorized' || error.kind === 'forbidden')
      ) {
        sessionStorage.removeItem(TOKEN_KEY);
        const message =
          token === undefined
            ? 'This server needs a token.'
            : (failed ?? 'That token was refused.');
        show(
          <Login
            message={message}
            onToken={(next) => (sessionStorage.setItem(TOKEN_KEY, next), void attempt(next))}
          />,
        );
        return;
      }
      show(
        <p class="error">
          Could not reach the server: {error instanceof Error ? error.message : String(error)}
        </p>,
      );
      return;
    }
    show(<App data={data} />);
  };
  await attempt(sessionStorage.getItem(TOKEN_KEY) ?? undefined);
}

void boot(document.getElementById('root')!);
