/**
 * `node --import bothost/register file.ts`: runs a TypeScript file on a Node.js line that does not
 * run TypeScript itself (20, and 22 before 22.18), through the jiti bothost depends on. It is
 * resolved from bothost's own folder, so it works in a project that depends on a clone's folder
 * too, where bothost's dependencies are not in the project's node_modules.
 */
import "jiti/register";
