/** Sample server records that satisfy the wire schemas, for scripted responses. */

export const user = {
  user_id: 12,
  delivery_email: null,
  email: "user12@chat.example.org",
  full_name: "Ada",
  date_joined: "2024-01-01T00:00:00Z",
  is_active: true,
  is_owner: false,
  is_admin: false,
  is_guest: false,
  is_bot: false,
  bot_type: null,
  role: 400,
  timezone: "Europe/Paris",
  avatar_url: null,
  avatar_version: 1,
  profile_data: { "3": { value: "https://example.org" } },
};

export const ownUser = {
  avatar_url: "https://chat.example.org/avatar/1",
  avatar_version: 1,
  email: "bot@chat.example.org",
  full_name: "Echo bot",
  is_admin: false,
  is_owner: false,
  is_guest: false,
  is_bot: true,
  is_active: true,
  role: 400,
  timezone: "",
  date_joined: "2024-01-01T00:00:00Z",
  max_message_id: 99,
  user_id: 30,
  delivery_email: "bot@chat.example.org",
};

export const channel = {
  stream_id: 5,
  name: "general",
  is_archived: false,
  description: "",
  rendered_description: "",
  date_created: 1700000000,
  creator_id: null,
  invite_only: false,
  is_web_public: false,
  stream_post_policy: 1,
  is_announcement_only: false,
  message_retention_days: null,
  history_public_to_subscribers: true,
  topics_policy: "inherit",
  first_message_id: 1,
  folder_id: null,
  can_add_subscribers_group: 10,
};

export const message = {
  id: 123,
  sender_id: 12,
  sender_email: "user12@chat.example.org",
  sender_full_name: "Ada",
  client: "bothost",
  content: "hi",
  recipient_id: 7,
  timestamp: 1700000000,
  type: "stream",
  display_recipient: "general",
  stream_id: 5,
  subject: "greetings",
};

export const snapshot = {
  topic: "greetings",
  content: "hi",
  rendered_content: "<p>hi</p>",
  user_id: 12,
  timestamp: 1700000000,
};

export const scheduledMessage = {
  scheduled_message_id: 9,
  type: "stream",
  to: 5,
  topic: "t",
  content: "c",
  rendered_content: "<p>c</p>",
  scheduled_delivery_timestamp: 1900000000,
  failed: false,
};

export const savedSnippet = { id: 3, title: "T", content: "C", date_created: 1700000000 };

export const registerResponse = {
  queue_id: "q1",
  last_event_id: -1,
  zulip_version: "11.4",
  zulip_feature_level: 442,
  event_queue_longpoll_timeout_seconds: 90,
};
