/**
 * Who may answer a dialog's question asked of a group or a role, as the bot's caches know people:
 * each check that cannot be right (a group the server does not have, a person the users cache does
 * not know because the bot does not track users) is warned of.
 */
import type { Logger } from "pino";
import type { BotServices } from "../effects/bot-services.ts";
import { roleName } from "../effects/users/roles.ts";
import { unknownGroupCheck } from "../effects/users/user-groups.ts";
import type { Membership } from "../pipeline/dialogs/ask-options.ts";

/** `receives`: whether the bot's queue takes events of a type (`realm_user`: its users cache is kept). */
export function dialogMembers(
  services: BotServices,
  log: Logger,
  receives: (type: string) => boolean,
): Membership {
  // A question for a role checks people the users cache knows: without `track("users")`, it says so once.
  let toldRoles = false;
  const untrackedRoles = () => {
    if (toldRoles || receives("realm_user")) return;
    toldRoles = true;
    log.warn(
      'a question for a role checked someone the users cache does not know, so they cannot answer it; call bot.track("users") in setup.',
    );
  };
  const unknownGroup = unknownGroupCheck();
  return {
    inGroup: (group, userId) => {
      if (unknownGroup(services.groups, group))
        log.warn(
          { group },
          `a question for the group "${group}" checked an answer, but the server has no such group, so nobody can answer it: check the group's name in the prompt's from`,
        );
      return services.groups.has(group, userId);
    },
    roleOf: (userId) => {
      const user = services.users.peek(userId);
      if (user === undefined) untrackedRoles();
      return roleName(user?.role);
    },
  };
}
