package convert

import (
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// APIKeys is an app's keys as the console lists them (never a hash).
func APIKeys(ks []domain.APIKey) *identityv1.ApiKeyList {
	items := make([]*identityv1.ApiKey, 0, len(ks))
	for _, k := range ks {
		items = append(items, APIKey(k))
	}
	return &identityv1.ApiKeyList{Kind: KindAPIKeys, TotalItems: int32(len(items)), ItemsLength: int32(len(items)), Items: items}
}

// Apps is a project's apps as the console lists them.
func Apps(as []domain.App) *identityv1.AppList {
	items := make([]*identityv1.App, 0, len(as))
	for _, a := range as {
		items = append(items, App(a))
	}
	return &identityv1.AppList{Items: items}
}

// MemberProfile is a console member: the account's name and normalised email once the invitation
// was accepted, else the membership's.
func MemberProfile(m domain.ProjectMember, a domain.MemberAccount, projects []domain.Project, secondFactor bool) *identityv1.MemberProfile {
	out := &identityv1.MemberProfile{MemberId: m.ID, ProjectId: m.ProjectID, Email: m.Email, Name: m.Name, SecondFactor: secondFactor,
		Projects: make([]*identityv1.Project, 0, len(projects))}
	if a.ID != "" {
		out.Email, out.Name = a.Email, a.Name
	}
	for _, p := range projects {
		out.Projects = append(out.Projects, Project(p))
	}
	return out
}

// MemberFactors is a member account's list of confirmed second factors.
func MemberFactors(factors []domain.Factor) *identityv1.MemberFactorList {
	out := &identityv1.MemberFactorList{Items: make([]*identityv1.MemberFactor, 0, len(factors))}
	for _, f := range factors {
		item := &identityv1.MemberFactor{Id: f.ID, Kind: string(f.Kind), Name: f.Name, CreatedAt: Timestamp(f.CreatedAt)}
		if f.LastUsedAt != nil {
			item.LastUsedAt = Timestamp(*f.LastUsedAt)
		}
		out.Items = append(out.Items, item)
	}
	return out
}
