/** Legacy push token registration and removal (deprecated endpoints the seed still lists). */
import { badRequest } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";

type Kind = "android" | "apns";

function token(ctx: AuthedContext, kind: Kind): string {
  const value = ctx.params.requiredStr("token");
  if (value === "" || value.length > 4096) throw badRequest("Empty or invalid length token");
  if (kind === "apns" && !/^[0-9a-fA-F]+$/.test(value) && !/^[A-Za-z0-9+/]+=*$/.test(value)) {
    throw badRequest("Invalid APNS token");
  }
  return value;
}

function tokenRoutes(path: string, kind: Kind) {
  return route(path, {
    POST: endpoint((ctx) => {
      const value = token(ctx, kind);
      ctx.params.str("appid");
      const user = ctx.user;
      if (!user.push_tokens.some((t) => t.kind === kind && t.token === value))
        user.push_tokens.push({ kind, token: value });
      return {};
    }),
    DELETE: endpoint((ctx) => {
      const value = token(ctx, kind);
      const user = ctx.user;
      const before = user.push_tokens.length;
      user.push_tokens = user.push_tokens.filter((t) => !(t.kind === kind && t.token === value));
      if (user.push_tokens.length === before) throw badRequest("Token does not exist");
      return {};
    }),
  });
}

export const pushTokenRoutes = [
  tokenRoutes("/users/me/android_gcm_reg_id", "android"),
  tokenRoutes("/users/me/apns_device_token", "apns"),
];
