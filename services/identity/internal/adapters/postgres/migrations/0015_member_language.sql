-- The language a member was invited in ('' when none was chosen): the mails identity sends the
-- member later (a disabled webhook endpoint of the project's app) are written in it.
alter table project_members add column language text not null default '';
