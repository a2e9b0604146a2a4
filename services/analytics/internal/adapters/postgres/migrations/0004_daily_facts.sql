-- The facts of the daily series (domain.Fact), one row per (app, kind, key): replaying an event
-- records its fact under the same key, which changes nothing but may move day to an earlier one.
-- Sign-ins and active users are counted from analytics_sign_ins instead.
create table analytics_daily_facts (
    app_id   uuid not null,
    kind     text not null,
    key      text not null,
    subject  text not null default '',  -- what a day counts once (the frozen tenant)
    day      date not null,             -- UTC
    currency text not null default '',  -- revenue kinds: upper-case ISO 4217
    amount   bigint not null default 0, -- revenue kinds: minor units
    primary key (app_id, kind, key)
);
-- The series reads one app's facts between two days.
create index analytics_daily_facts_app_day on analytics_daily_facts (app_id, day, kind);
