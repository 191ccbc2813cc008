import { randomInt } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh 32-character alphanumeric key, the shape the real server's keys and tokens have. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}
