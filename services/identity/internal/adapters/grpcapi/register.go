package grpcapi

import (
	"google.golang.org/grpc"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
)

// Register serves the identity, operator, token, login, member, internal, admin and user-admin APIs of svc on s. s must
// enforce the access policy (grpcx.NewServer does): these handlers trust the Principal it admits.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	identityv1.RegisterIdentityServiceServer(s, &IdentityServer{svc: svc})
	identityv1.RegisterOperatorServiceServer(s, &OperatorServer{svc: svc})
	identityv1.RegisterIdentityInternalServiceServer(s, &InternalServer{svc: svc})
	identityv1.RegisterIdentityAdminServiceServer(s, &AdminServer{svc: svc})
	identityv1.RegisterTokenServiceServer(s, &TokenServer{svc: svc})
	identityv1.RegisterLoginServiceServer(s, &LoginServer{svc: svc})
	identityv1.RegisterMemberServiceServer(s, &MemberServer{svc: svc})
	identityv1.RegisterUserAdminServiceServer(s, &UserAdminServer{svc: svc})
}
