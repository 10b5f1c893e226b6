/**
 * Who is calling: a name and a role. The token table (src/security) resolves a bearer token to a
 * Principal; the API's auth hook puts it on the request; audit records carry its name.
 * Without auth configured (loopback only) every caller is ANONYMOUS, with the admin role.
 */
export type Role = 'admin' | 'viewer';

export interface Principal {
  name: string;
  role: Role;
}

export const ANONYMOUS: Principal = { name: 'anonymous', role: 'admin' };
