package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Console members' passkeys are member factors of kind passkey. Their ceremonies are the hosted
// pages' (passkeys.go) with the console as the relying party: the deployment's public URL, which
// serves the console, under the console's name.

// memberRPName is what the browser's passkey prompt names for the console.
const memberRPName = "Berth console"

// memberHolder is the member account as the WebAuthn library sees it, holding its passkeys.
func (s *Service) memberHolder(ctx context.Context, a domain.MemberAccount) (passkeyHolder, error) {
	factors, err := s.store.ListMemberFactors(ctx, a.ID)
	if err != nil {
		return passkeyHolder{}, err
	}
	return s.withPasskeys(passkeyHolder{id: a.ID, name: a.Email, display: firstOf(a.Name, a.Email)}, factors)
}

// The sealed state of a member's ceremony is bound to the account (a registration) or to the
// sign-in's challenge (an assertion), so it moves to no other account or sign-in, nor to a
// user's ceremony.
func memberRegistrationAAD(a domain.MemberAccount) string {
	return "member passkey registration\x00" + a.ID
}
func memberAssertionAAD(c domain.MemberChallenge) string {
	return "member passkey assertion\x00" + c.ID
}

// StartMemberPasskeyRegistration begins adding a passkey to the operator token's member account:
// the options of navigator.credentials.create (the account's passkeys excluded) and the sealed
// state FinishMemberPasskeyRegistration takes back.
func (s *Service) StartMemberPasskeyRegistration(ctx context.Context, p authn.Principal) (PasskeyCeremony, error) {
	_, a, err := s.operatorAccount(ctx, p)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	rp, err := s.relyingParty(memberRPName)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	h, err := s.memberHolder(ctx, a)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return s.beginRegistration(rp, h, memberRegistrationAAD(a))
}

// MemberPasskeyRegistration is the console's created passkey: the name the member gives it, the
// browser's credential with the ceremony's state, and the current password, asked again.
type MemberPasskeyRegistration struct {
	Name, Credential, State, Current string
}

// FinishMemberPasskeyRegistration checks the name and the current password (under the sign-in
// limits, as for a TOTP enrolment), verifies the credential the browser created and stores it as
// a passkey of the account. The account's first second factor brings its recovery codes, answered
// once; otherwise the answer is empty. A credential that cannot be verified is errPasskey.
func (s *Service) FinishMemberPasskeyRegistration(ctx context.Context, p authn.Principal, in MemberPasskeyRegistration) ([]string, error) {
	name, err := domain.NewPasskeyName(in.Name)
	if err != nil {
		return nil, err
	}
	a, _, err := s.operatorPassword(ctx, p, in.Current)
	if err != nil {
		return nil, err
	}
	rp, err := s.relyingParty(memberRPName)
	if err != nil {
		return nil, err
	}
	h, err := s.memberHolder(ctx, a)
	if err != nil {
		return nil, err
	}
	f, err := s.createPasskey(rp, h, "", a.ID, in.Credential, in.State, memberRegistrationAAD(a))
	if err != nil {
		return nil, err
	}
	f.Name = name
	plain, stored, err := domain.NewRecoveryCodes("", a.ID, f.CreatedAt, s.pepper)
	if err != nil {
		return nil, err
	}
	first, err := s.store.AddMemberPasskey(ctx, f, stored)
	if err != nil || !first {
		return nil, err
	}
	return plain, nil
}

// ListMemberFactors lists the confirmed second factors of the operator token's member account,
// oldest first: the TOTP factor and the passkeys with their names and last use.
func (s *Service) ListMemberFactors(ctx context.Context, p authn.Principal) ([]domain.Factor, error) {
	_, a, err := s.operatorAccount(ctx, p)
	if err != nil {
		return nil, err
	}
	factors, err := s.store.ListMemberFactors(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Factor, 0, len(factors))
	for _, f := range factors {
		if f.Confirmed() {
			out = append(out, f)
		}
	}
	return out, nil
}

// RemoveMemberPasskey removes one passkey of the operator token's member account once the current
// password is proved (under the sign-in limits). The account's last second factor takes its
// recovery codes with it; sign-in then asks for the password alone. Another account's passkey is
// not found, like an absent one.
func (s *Service) RemoveMemberPasskey(ctx context.Context, p authn.Principal, id, current string) error {
	id = domain.CanonicalID(id)
	if !domain.IsUUID(id) {
		return fault.InvalidField("passkeyId", "must be a UUID")
	}
	a, _, err := s.operatorPassword(ctx, p, current)
	if err != nil {
		return err
	}
	return s.store.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, id)
}

// RemoveMemberTotp removes the TOTP factor of the operator token's member account, or its
// enrolment not yet confirmed, once the current password is proved (under the sign-in limits). As
// with a passkey, the account's last second factor takes its recovery codes with it.
func (s *Service) RemoveMemberTotp(ctx context.Context, p authn.Principal, current string) error {
	a, _, err := s.operatorPassword(ctx, p, current)
	if err != nil {
		return err
	}
	f, err := s.store.GetMemberFactor(ctx, a.ID)
	if err != nil {
		return err
	}
	return s.store.RemoveMemberFactor(ctx, a.ID, domain.FactorTOTP, f.ID)
}

// StartMemberPasskeyAssertion answers the options of navigator.credentials.get for a console
// sign-in waiting for its second factor, bound to its challenge, or an empty ceremony when the
// account holds no passkey. A challenge that cannot be used is errMemberChallengeSpent.
func (s *Service) StartMemberPasskeyAssertion(ctx context.Context, challenge string) (PasskeyCeremony, error) {
	ch, a, err := s.liveMemberChallenge(ctx, challenge)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	h, err := s.memberHolder(ctx, a)
	if err != nil || len(h.creds) == 0 {
		return PasskeyCeremony{}, err
	}
	rp, err := s.relyingParty(memberRPName)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return s.beginAssertion(rp, h, memberAssertionAAD(ch))
}

// MemberPasskeyInput is the console's passkey answer to a sign-in's second step.
type MemberPasskeyInput struct {
	Challenge, Passkey, State string
	Client                    MemberClient
}

// VerifyMemberPasskey finishes a console sign-in that asked for the second factor with the
// assertion of one of the account's passkeys in the ceremony of that sign-in's challenge. The
// passkey's signature counter must rise (unless its authenticator keeps none), and the challenge
// is spent on success, so an assertion works once. A passkey that cannot be verified counts like
// a wrong code (memberSecondStep) and is errPasskey.
func (s *Service) VerifyMemberPasskey(ctx context.Context, in MemberPasskeyInput) (MemberSignIn, error) {
	return s.memberSecondStep(ctx, in.Challenge, in.Client, errPasskey, func(a domain.MemberAccount, ch domain.MemberChallenge) (bool, error) {
		rp, err := s.relyingParty(memberRPName)
		if err != nil {
			return false, err
		}
		h, err := s.memberHolder(ctx, a)
		if err != nil {
			return false, err
		}
		cred, ok := s.validateAssertion(rp, h, in.Passkey, in.State, memberAssertionAAD(ch))
		if !ok {
			return false, nil
		}
		key, ok := provedKey(h, cred)
		if !ok {
			return false, nil
		}
		err = s.store.UseMemberFactorStep(ctx, a.ID, key.ID, int64(cred.Authenticator.SignCount), s.now())
		if errors.Is(err, domain.ErrCodeReplayed) || errors.Is(err, domain.ErrNotFound) {
			return false, nil // a counter that did not rise, or a passkey removed meanwhile
		}
		return err == nil, err
	})
}
