/**
 * What a request body may be: JSON only, and "no body" however it is labelled.
 *  - Fastify parses text/plain out of the box; the API takes JSON only, so text/plain is refused
 *    with 415 like any other type (the error handler words it), not parsed into a string that
 *    then fails the schema with 400.
 *  - A request with an empty body has no body, whatever its Content-Type says: a DELETE labelled
 *    application/json with nothing in it is accepted (Fastify would refuse the empty JSON), and so
 *    is a body-less POST that a client labelled form-urlencoded. A PUT without a body still fails
 *    its schema (400 "body must be object").
 */
import { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const requestBodies = fp(async (app: FastifyInstance) => {
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (req) => {
    const h = req.headers;
    // HTTP/1.1: without Content-Length and Transfer-Encoding a request has no body.
    const empty = (h['content-length'] === undefined || h['content-length'] === '0') && h['transfer-encoding'] === undefined;
    if (empty && h['content-type'] !== undefined) delete h['content-type'];
  });
}, { name: 'request-bodies' });
