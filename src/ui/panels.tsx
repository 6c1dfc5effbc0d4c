/**
 * The rest of the server beside the resources: templates (a form for their variables, completion
 * as you type, then open the URI), prompts (argument form, rendered messages), tools (a form from
 * the input schema, run, structured result), and "who am I" (the principal and its rules).
 */
import { UriTemplate } from '@modelcontextprotocol/client';
import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { DataSource, PromptInfo, PromptMessage, Template, ToolAnswer, ToolInfo } from './data';
import { argumentsOf, CompletingField, SchemaFields, type Values } from './forms';
import { JsonView } from './views';
import { definedProps } from '../core/defined.js';

function failureText(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * The entry of `list` the user picked (found again by its key), else the first: the list may arrive,
 * or be listed again, after the panel opened.
 */
function usePicked<T>(
  list: readonly T[],
  keyOf: (entry: T) => string,
): [T | undefined, (entry: T) => void] {
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const chosen = list.find((entry) => keyOf(entry) === picked) ?? list[0];
  return [chosen, (entry) => setPicked(keyOf(entry))];
}

export function TemplatesPanel({
  data,
  templates,
  onOpenUri,
}: {
  data: DataSource;
  templates: Template[];
  onOpenUri(uri: string): void;
}): JSX.Element {
  const [chosen, setChosen] = usePicked(templates, (t) => t.uriTemplate);
  const [values, setValues] = useState<Values>({});
  const [error, setError] = useState<string | undefined>(undefined);
  if (templates.length === 0) return <p class="muted">This server serves no templates.</p>;
  const template = chosen === undefined ? undefined : new UriTemplate(chosen.uriTemplate);
  return (
    <div class="panel">
      <ul class="choices">
        {templates.map((t) => (
          <li key={t.uriTemplate}>
            <button
              class={`link${t === chosen ? ' current' : ''}`}
              onClick={() => (setChosen(t), setValues({}))}
            >
              {t.title ?? t.name}
            </button>
            <code>{t.uriTemplate}</code>
          </li>
        ))}
      </ul>
      {chosen === undefined || template === undefined ? null : (
        <form
          class="form"
          onSubmit={(event) => {
            event.preventDefault();
            try {
              onOpenUri(template.expand(values));
              setError(undefined);
            } catch (failure) {
              setError(failureText(failure));
            }
          }}
        >
          {chosen.description === undefined ? null : <p>{chosen.description}</p>}
          {template.variableNames.map((name) => (
            <CompletingField
              key={`${chosen.uriTemplate}:${name}`}
              name={name}
              label={name}
              value={values[name] ?? ''}
              onChange={(value) => setValues({ ...values, [name]: value })}
              suggest={
                data.complete === undefined
                  ? undefined
                  : (value: string) =>
                      data.complete!(
                        { type: 'ref/resource', uri: chosen.uriTemplate },
                        name,
                        value,
                        values,
                      )
              }
            />
          ))}
          <button type="submit">Open</button>
          {error === undefined ? null : <p class="error">{error}</p>}
        </form>
      )}
    </div>
  );
}

export function PromptsPanel({
  data,
  prompts,
}: {
  data: DataSource;
  prompts: PromptInfo[];
}): JSX.Element {
  const [chosen, setChosen] = usePicked(prompts, (p) => p.name);
  const [values, setValues] = useState<Values>({});
  const [messages, setMessages] = useState<PromptMessage[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  if (prompts.length === 0) return <p class="muted">This server offers no prompts.</p>;
  return (
    <div class="panel">
      <ul class="choices">
        {prompts.map((p) => (
          <li key={p.name}>
            <button
              class={`link${p === chosen ? ' current' : ''}`}
              onClick={() => (setChosen(p), setValues({}), setMessages(undefined))}
            >
              {p.title ?? p.name}
            </button>
            {p.description === undefined ? null : <span class="muted"> {p.description}</span>}
          </li>
        ))}
      </ul>
      {chosen === undefined ? null : (
        <form
          class="form"
          onSubmit={(event) => {
            event.preventDefault();
            data.getPrompt?.(chosen.name, values).then(
              (answer) => (setMessages(answer.messages), setError(undefined)),
              (failure: unknown) => setError(failureText(failure)),
            );
          }}
        >
          {(chosen.arguments ?? []).map((a) => (
            <CompletingField
              key={`${chosen.name}:${a.name}`}
              name={a.name}
              label={a.title ?? a.name}
              {...definedProps({ required: a.required, description: a.description })}
              value={values[a.name] ?? ''}
              onChange={(value) => setValues({ ...values, [a.name]: value })}
              suggest={
                data.complete === undefined
                  ? undefined
                  : (value: string) =>
                      data.complete!(
                        { type: 'ref/prompt', name: chosen.name },
                        a.name,
                        value,
                        values,
                      )
              }
            />
          ))}
          <button type="submit">Render</button>
          {error === undefined ? null : <p class="error">{error}</p>}
        </form>
      )}
      {messages === undefined ? null : (
        <ol class="messages">
          {messages.map((m, i) => (
            <li key={i} class={`message ${m.role}`}>
              <strong>{m.role}</strong>
              <pre class="text">
                {m.content.text ??
                  m.content.resource?.text ??
                  m.content.uri ??
                  `[${m.content.type}]`}
              </pre>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

export function ToolsPanel({ data, tools }: { data: DataSource; tools: ToolInfo[] }): JSX.Element {
  const [chosen, setChosen] = usePicked(tools, (t) => t.name);
  const [values, setValues] = useState<Values>({});
  const [answer, setAnswer] = useState<ToolAnswer | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  if (tools.length === 0) return <p class="muted">This server offers no tools.</p>;
  return (
    <div class="panel">
      <ul class="choices">
        {tools.map((t) => (
          <li key={t.name}>
            <button
              class={`link${t === chosen ? ' current' : ''}`}
              onClick={() => (setChosen(t), setValues({}), setAnswer(undefined))}
            >
              {t.title ?? t.name}
            </button>
          </li>
        ))}
      </ul>
      {chosen === undefined ? null : (
        <form
          class="form"
          onSubmit={(event) => {
            event.preventDefault();
            let args: Record<string, unknown>;
            try {
              args = argumentsOf(chosen.inputSchema, values);
            } catch (failure) {
              setError(failureText(failure));
              return;
            }
            data.callTool(chosen.name, args).then(
              (result) => (setAnswer(result), setError(undefined)),
              (failure: unknown) => setError(failureText(failure)),
            );
          }}
        >
          {chosen.description === undefined ? null : <p>{chosen.description}</p>}
          <SchemaFields schema={chosen.inputSchema} values={values} onChange={setValues} />
          <button type="submit">Run</button>
          {error === undefined ? null : (
            <p class="error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
      {answer === undefined ? null : (
        <div class={`result${answer.isError === true ? ' failed' : ''}`}>
          {answer.structuredContent === undefined ? null : (
            <JsonView text={JSON.stringify(answer.structuredContent)} />
          )}
          {answer.content.map((c, i) => (
            <pre key={i} class="text">
              {c.text ?? c.uri ?? c.resource?.text ?? `[${c.type}]`}
            </pre>
          ))}
        </div>
      )}
    </div>
  );
}

interface WhoAmI {
  principal: { id: string; kind: string; scopes: string[] };
  access?: { default: string; rules: Record<string, unknown>[] };
}

export function WhoAmIPanel({
  data,
  available,
}: {
  data: DataSource;
  available: boolean;
}): JSX.Element {
  const [who, setWho] = useState<WhoAmI | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!available) return;
    data.callTool('who_am_i', {}).then(
      (answer) => setWho(answer.structuredContent as unknown as WhoAmI),
      (failure: unknown) => setError(failureText(failure)),
    );
  }, [available]);
  if (!available) return <p class="muted">This server does not offer the who_am_i tool.</p>;
  if (error !== undefined) return <p class="error">{error}</p>;
  if (who === undefined) return <p class="muted">Asking…</p>;
  return (
    <div class="panel whoami">
      <dl class="meta">
        <dt>Principal</dt>
        <dd class="principal">{who.principal.id}</dd>
        <dt>Kind</dt>
        <dd>{who.principal.kind}</dd>
        <dt>Scopes</dt>
        <dd>{who.principal.scopes.length === 0 ? 'none' : who.principal.scopes.join(', ')}</dd>
        <dt>Rules</dt>
        <dd>
          {who.access === undefined
            ? 'none in force: everything served is visible'
            : `${who.access.rules.length}; otherwise ${who.access.default}`}
        </dd>
      </dl>
      {who.access === undefined ? null : <JsonView text={JSON.stringify(who.access.rules)} />}
    </div>
  );
}
