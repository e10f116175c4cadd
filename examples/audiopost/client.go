package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

func init() {
	register("client", "manage OAuth clients: client add|list|delete [-data DIR] ...", runClient)
}

var clientVerbs = map[string]acctVerb{
	"add":    {"add [-data DIR] [-user U] -name N [-redirect-uri URI]... [-public]", clientAdd},
	"list":   {"list [-data DIR] [-user U]", clientList},
	"delete": {"delete [-data DIR] [-user U] ID", clientDelete},
}

func runClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return acctDispatch(ctx, "client", clientVerbs, []string{"add", "list", "delete"}, args, stdout, stderr)
}

// acctStrings is a repeatable string flag.
type acctStrings []string

func (s *acctStrings) String() string     { return strings.Join(*s, ",") }
func (s *acctStrings) Set(v string) error { *s = append(*s, v); return nil }

func clientAdd(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username of the owner (default: an operator's client)")
	name := fs.String("name", "", "application name shown on the consent page")
	public := fs.Bool("public", false, "public client (desktop/mobile app): no secret, PKCE required")
	var uris acctStrings
	fs.Var(&uris, "redirect-uri", "registered redirect URI, exactly as the app sends it (repeatable)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *name == "" {
		fs.Usage()
		return errors.New("client add needs -name")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := acctUser(ctx, a, *user)
	if err != nil {
		return err
	}
	c, secret, err := a.RegisterClient(ctx, owner, *name, uris, *public)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "client_id: %s\n", c.ID)
	if secret != "" {
		fmt.Fprintf(stdout, "client_secret: %s\n", secret)
		fmt.Fprintln(stderr, "The client secret is shown only now.")
	}
	return nil
}

func clientList(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username of the owner (default: the operator's clients)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := acctUser(ctx, a, *user)
	if err != nil {
		return err
	}
	cs, err := a.ListClients(ctx, owner)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE\tREDIRECT URIS")
	for _, c := range cs {
		typ := "confidential"
		if c.Public {
			typ = "public"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Name, typ, strings.Join(c.RedirectURIs, " "))
	}
	return tw.Flush()
}

func clientDelete(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username of the owner (default: an operator's client)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errors.New("client delete needs one client ID")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := acctUser(ctx, a, *user)
	if err != nil {
		return err
	}
	if err := a.DeleteClient(ctx, owner, pos[0]); err != nil {
		return fmt.Errorf("delete client %s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "deleted client %s\n", pos[0])
	return nil
}
