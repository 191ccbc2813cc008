/**
 * A client whose calls wait for the account's budget in one lane (budget-line.ts) unless a call
 * names its own: a run no person waits on (a dead letter's replay) hands its handlers one, so that
 * every call they make through `ctx.api` gives way to live ones, with or without `ctx.signal`.
 */
import type { CallLane } from "./budget-line.ts";
import { type Client, resourceContextOf, withResources } from "./create-client.ts";
import type { RequestFn } from "./transport.ts";

const inBackground = new WeakMap<Client, Client>();

/**
 * `client` in the background lane: the same account, budget, connections and server state (what
 * one learns, the other reads), its calls in the background lane unless one names its `lane`,
 * whatever signal it is given. Made once per client.
 */
export function backgroundClientOf(client: Client): Client {
  let view = inBackground.get(client);
  if (view === undefined) {
    view = inLane(client, "background");
    inBackground.set(client, view);
  }
  return view;
}

function inLane(client: Client, lane: CallLane): Client {
  const base = resourceContextOf(client);
  if (base === undefined) throw new Error("a client in a lane is made from one createClient made");
  const request: RequestFn = (method, path, params, options) =>
    client.request(method, path, params, { ...options, lane: options?.lane ?? lane });
  const fields = {
    origin: client.origin,
    email: client.email,
    get featureLevel() {
      return client.featureLevel;
    },
    set featureLevel(value: number | undefined) {
      client.featureLevel = value;
    },
    get isBot() {
      return client.isBot;
    },
    set isBot(value: boolean | undefined) {
      client.isBot = value;
    },
    request,
    budget: client.budget,
  };
  return withResources(fields, {
    state: client,
    logger: base.logger,
    call: (method, path, params, options, schema) =>
      base.call(method, path, params, { ...options, lane: options.lane ?? lane }, schema),
  });
}
