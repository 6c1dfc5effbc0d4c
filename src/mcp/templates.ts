/**
 * The RFC 6570 engine the registry matches templates with: the SDK's `UriTemplate`, whose matcher
 * runs in linear time (a 64 KiB hostile URI against every template answers in milliseconds).
 */
import { UriTemplate } from '@modelcontextprotocol/server';
import type { TemplateEngine } from '../core/registry.js';

export const sdkTemplateEngine: TemplateEngine = {
  compile(template) {
    const compiled = new UriTemplate(template);
    return { match: (uri) => compiled.match(uri) };
  },
};
