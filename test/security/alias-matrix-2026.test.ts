// Issue 11, item 1: access is judged on the resource, not the spelling. Four sources (files, git,
// SQLite, an HTTP API) each hold a secret resource; tokens deny it in each style a rule takes
// (exact URI, `*.ext`, `**` with an extension, a directory), or allow only the public resources by
// exact URI. Every spelling each provider accepts for the secret (aliases.ts) is tried through
// every route — resources/read (plain and template reads), the read_resource tool, a prompt
// embedding, 2025 resources/subscribe, 2026 subscriptions/listen — and lists, list_resources,
// find_resources and completion are checked for the secret's name. The admin token reads every
// spelling (so each is a real alias the test could fail on); every restricted token is answered as
// for a missing resource, and every spelling of a public resource gets the public resource's answer.
// Through the real SDK client over a real HTTP socket, both eras; every byte the restricted clients
// received is scanned for the secret. (Over stdio the one principal is the local user, whom rules
// do not apply to: the rules' routes exist on HTTP only.) A search route, once it exists, joins the
// `routes` in alias-matrix.ts.
// This file runs the 2026 era; alias-matrix-2025.test.ts the other, in a worker of its own.
import { aliasMatrix } from './alias-matrix.js';

aliasMatrix('2026');
