// Who the token is (GET /api/v1/whoami) and what its role allows. The
// header shows it; pages disable (never hide) what the role cannot do, with
// the reason. When the server cannot say (an older server without /whoami,
// or a failure), nothing is disabled: the server decides, and its
// PERMISSION_DENIED is shown as before.

import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Api } from './api';

export type Role = 'viewer' | 'operator' | 'admin';

export interface WhoAmI {
  name: string;
  role: string;
  tokens_required: boolean;
}

// `who` is null while asking, or when the server could not say (`error`).
export interface Identity {
  who: WhoAmI | null;
  error: unknown;
}

export const IdentityContext = createContext<Identity>({ who: null, error: null });

const kRank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export function FetchWhoAmI(signal?: AbortSignal): Promise<WhoAmI> {
  return Api<WhoAmI>('api/v1/whoami', { signal });
}

// "vera · viewer"; "no tokens required" when the server has tokens off.
export function IdentityText(who: WhoAmI): string {
  if (!who.tokens_required) return 'no tokens required';
  return who.name ? `${who.name} · ${who.role}` : who.role;
}

export interface Permission {
  allowed: boolean;
  // Empty when allowed: "needs admin".
  short: string;
  // For the tooltip: "Needs the admin role; vera is operator."
  reason: string;
}

const kAllowed: Permission = { allowed: true, short: '', reason: '' };

export function PermissionOf(identity: Identity, need: Role): Permission {
  const who = identity.who;
  if (!who || !who.tokens_required) return kAllowed;
  const have = kRank[who.role as Role];
  // A role this dashboard does not know: let the server decide.
  if (have === undefined || have >= kRank[need]) return kAllowed;
  return {
    allowed: false,
    short: `needs ${need}`,
    reason: `Needs the ${need} role; ${who.name || 'this token'} is ${who.role}.`,
  };
}

// What the current token may do that needs `need`.
export function useCan(need: Role): Permission {
  return PermissionOf(useContext(IdentityContext), need);
}
