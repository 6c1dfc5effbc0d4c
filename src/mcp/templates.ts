/**
 * The RFC 6570 engine the registry matches templates with: the SDK's `UriTemplate` parses and
 * validates each template, and its matching semantics are executed in linear time by
 * `compileLinear` — the SDK's own regular expression backtracks quadratically on hostile URIs
 * against templates such as `{+path}{?lines}` (~400 ms for 64 KiB); this answers in milliseconds.
 */
import { UriTemplate } from '@modelcontextprotocol/server';
import type { TemplateEngine } from '../core/templates.js';
import { compileLinear } from './template-match.js';

export const sdkTemplateEngine: TemplateEngine = {
  compile(template) {
    const parsed = new UriTemplate(template); // throws on a template the SDK refuses
    return {
      ...compileLinear(template),
      // from the variables' own members only: the SDK reads each name off the object given, where
      // a variable `toString` left out would be Object.prototype's function, spelt into the URI
      expand: (variables) => parsed.expand(Object.assign(Object.create(null), variables)),
    };
  },
};
