-- Daily roll-ups of the series (issue 27): the series read one row per (app, day) for the sign-ins
-- and the active subscriptions and one per (app, day, kind, currency) for the counted facts,
-- instead of aggregating a year of raw rows on every read. Row triggers keep them, so every change happens in the transaction that
-- writes the raw row it derives from, whatever writes it (the consumers, a rebuild, a COPY): the
-- roll-ups are exact under the inbox's apply-once and a replay's move to an earlier day.
-- (Version 0005 belongs to another change; the runner applies the versions it has not applied in
-- order and needs no contiguous numbers. This one reads and writes only analytics_sign_ins,
-- analytics_daily_facts and its own tables.)

-- Sign-ins and distinct users per UTC day of a sign-in's instant.
create table analytics_daily_sign_ins (
    app_id       uuid not null,
    day          date not null,
    sign_ins     bigint not null,
    active_users bigint not null,
    primary key (app_id, day)
);

-- The users that signed in on a day, once each: a user's first sign-in of a day counts them active.
create table analytics_daily_active_users (
    app_id  uuid not null,
    day     date not null,
    user_id uuid not null,
    primary key (app_id, day, user_id)
);

-- The counted facts per day, kind and currency (the subscription kinds have their own roll-up below):
-- facts is the number of facts, or of distinct subjects for the tenant_frozen kind; amount their sum.
create table analytics_daily_fact_sums (
    app_id   uuid not null,
    day      date not null,
    kind     text not null,
    currency text not null,
    facts    bigint not null,
    amount   bigint not null,
    primary key (app_id, day, kind, currency)
);

-- The frozen tenants of a day with the number of their freeze facts on it: a tenant counts once a
-- day, and stops counting only when a replay has moved its last freeze of that day to an earlier one.
create table analytics_daily_frozen_subjects (
    app_id  uuid not null,
    day     date not null,
    subject text not null,
    facts   bigint not null,
    primary key (app_id, day, subject)
);

-- The net number of subscriptions that start less those that end on a day: the subscriptions active
-- on a day are the sum of the changes up to it. A subscription runs from the day of its
-- subscription_started fact up to, not including, the day of its subscription_ended fact; one
-- without a start, or ending by the day it started, never runs and changes nothing. Days whose
-- changes cancel out have no row.
create table analytics_daily_subscription_changes (
    app_id uuid not null,
    day    date not null,
    change bigint not null,
    primary key (app_id, day)
);

-- analytics_subscription_span is the changes of a subscription that starts on day starts and ends
-- on day ends (either null when that fact is not stored).
create function analytics_subscription_span(starts date, ends date) returns table (day date, change int)
language sql immutable as $$
    select starts, 1 where starts is not null and (ends is null or ends > starts)
    union all
    select ends, -1 where starts is not null and ends > starts
$$;

-- The days of each subscription's two facts as the changes above count them; its row is also what
-- serialises the writers of its start and its end: they are two rows of analytics_daily_facts, maybe
-- written by concurrent transactions, and each needs the other's day to know the span's changes.
create table analytics_daily_subscription_spans (
    app_id uuid not null,
    key    text not null,
    starts date,
    ends   date,
    primary key (app_id, key)
);

-- analytics_subscription_moved sets the day of subscription fact f to fact_day (null: deleted)
-- and replaces the subscription's changes by those of its new span. The span row is locked first
-- (a concurrent writer of the same subscription waits for this transaction to commit, then reads
-- the row it wrote); the changes are then written in day order, the order every writer locks them
-- in. A row lock, unlike an advisory one, costs no shared memory, so a COPY or a rebuild of many
-- subscriptions in one transaction needs no more locks than one.
create function analytics_subscription_moved(f analytics_daily_facts, fact_day date) returns void
language plpgsql as $$
declare
    was analytics_daily_subscription_spans;
    new_starts date;
    new_ends date;
begin
    insert into analytics_daily_subscription_spans (app_id, key) values (f.app_id, f.key) on conflict do nothing;
    select * into was from analytics_daily_subscription_spans s where s.app_id = f.app_id and s.key = f.key for update;
    new_starts := case when f.kind = 'subscription_started' then fact_day else was.starts end;
    new_ends := case when f.kind = 'subscription_ended' then fact_day else was.ends end;
    update analytics_daily_subscription_spans s set starts = new_starts, ends = new_ends
        where s.app_id = f.app_id and s.key = f.key;
    insert into analytics_daily_subscription_changes as c (app_id, day, change)
        select f.app_id, d.day, sum(d.change) from (
            select o.day, -o.change as change from analytics_subscription_span(was.starts, was.ends) o
            union all
            select n.day, n.change from analytics_subscription_span(new_starts, new_ends) n
        ) d group by d.day having sum(d.change) <> 0 order by d.day
        on conflict (app_id, day) do update set change = c.change + excluded.change;
    delete from analytics_daily_subscription_changes c
        where c.app_id = f.app_id and c.day in (was.starts, was.ends, new_starts, new_ends) and c.change = 0;
end $$;

-- analytics_daily_fact_add adds (sign = 1) or takes away (sign = -1) one fact of a counted kind on
-- its day. Locks are taken subject row first, then the sum row, and a move takes away from the later
-- day before adding to the earlier one: every writer locks in the same order, so they cannot deadlock.
create function analytics_daily_fact_add(f analytics_daily_facts, sign int) returns void
language plpgsql as $$
declare
    counted int := sign;
    left_facts bigint;
begin
    if f.kind = 'tenant_frozen' then
        insert into analytics_daily_frozen_subjects as s (app_id, day, subject, facts)
            values (f.app_id, f.day, f.subject, sign)
            on conflict (app_id, day, subject) do update set facts = s.facts + sign
            returning s.facts into left_facts;
        -- The tenant counts once a day: only its first freeze of the day adds it, only its last
        -- one leaving takes it away.
        if (sign = 1 and left_facts <> 1) or (sign = -1 and left_facts <> 0) then
            counted := 0;
        end if;
        if left_facts = 0 then
            delete from analytics_daily_frozen_subjects where app_id = f.app_id and day = f.day and subject = f.subject;
        end if;
    end if;
    insert into analytics_daily_fact_sums as s (app_id, day, kind, currency, facts, amount)
        values (f.app_id, f.day, f.kind, f.currency, counted, sign * f.amount)
        on conflict (app_id, day, kind, currency) do update set facts = s.facts + counted, amount = s.amount + excluded.amount
        returning s.facts into left_facts;
    -- A day, kind and currency without facts left has no row, as the raw rows would not list it (a
    -- zero amount in a currency nobody paid in is not the same answer).
    if left_facts = 0 then
        delete from analytics_daily_fact_sums where app_id = f.app_id and day = f.day and kind = f.kind and currency = f.currency;
    end if;
end $$;

create function analytics_daily_facts_rollup() returns trigger
language plpgsql as $$
declare
    f analytics_daily_facts := coalesce(new, old);
begin
    if f.kind in ('subscription_started', 'subscription_ended') then
        perform analytics_subscription_moved(f, case when tg_op <> 'DELETE' then new.day end);
        return null;
    end if;
    if tg_op in ('UPDATE', 'DELETE') then
        perform analytics_daily_fact_add(old, -1);
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        perform analytics_daily_fact_add(new, 1);
    end if;
    return null;
end $$;

create trigger analytics_daily_facts_rollup after insert or update or delete on analytics_daily_facts
    for each row execute function analytics_daily_facts_rollup();

create function analytics_sign_ins_rollup() returns trigger
language plpgsql as $$
declare
    d date := (new.at at time zone 'UTC')::date;
    first_of_day int;
begin
    insert into analytics_daily_active_users (app_id, day, user_id) values (new.app_id, d, new.user_id)
        on conflict do nothing;
    get diagnostics first_of_day = row_count;
    insert into analytics_daily_sign_ins as s (app_id, day, sign_ins, active_users)
        values (new.app_id, d, 1, first_of_day)
        on conflict (app_id, day) do update set sign_ins = s.sign_ins + 1, active_users = s.active_users + excluded.active_users;
    return null;
end $$;

-- Sign-ins are only ever inserted (a stored id wins, their instant never changes).
create trigger analytics_sign_ins_rollup after insert on analytics_sign_ins
    for each row execute function analytics_sign_ins_rollup();

-- Backfill from the rows stored so far.
insert into analytics_daily_active_users (app_id, day, user_id)
    select distinct app_id, (at at time zone 'UTC')::date, user_id from analytics_sign_ins;
insert into analytics_daily_sign_ins (app_id, day, sign_ins, active_users)
    select app_id, (at at time zone 'UTC')::date, count(*), count(distinct user_id) from analytics_sign_ins group by 1, 2;
insert into analytics_daily_frozen_subjects (app_id, day, subject, facts)
    select app_id, day, subject, count(*) from analytics_daily_facts where kind = 'tenant_frozen' group by 1, 2, 3;
insert into analytics_daily_fact_sums (app_id, day, kind, currency, facts, amount)
    select app_id, day, kind, currency, count(distinct case when kind = 'tenant_frozen' then subject else key end), sum(amount)
    from analytics_daily_facts where kind not in ('subscription_started', 'subscription_ended')
    group by 1, 2, 3, 4;
insert into analytics_daily_subscription_spans (app_id, key, starts, ends)
    select app_id, key, min(day) filter (where kind = 'subscription_started'), min(day) filter (where kind = 'subscription_ended')
    from analytics_daily_facts where kind in ('subscription_started', 'subscription_ended') group by 1, 2;
insert into analytics_daily_subscription_changes (app_id, day, change)
    select s.app_id, c.day, sum(c.change) from analytics_daily_subscription_spans s
        cross join analytics_subscription_span(s.starts, s.ends) c
    group by 1, 2 having sum(c.change) <> 0;
