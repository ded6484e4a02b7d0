// Package changes turns desired and current records into change batches under a policy. It
// never deletes or overwrites a record another owner (or no one) holds, keeps every change
// for one name in one batch so that a routing-policy transition is atomic, and reports
// conflicts instead of resolving them. While a cutover's authority record holds a name's
// weights, the plan keeps the weights the cutover wrote whatever the source says (each
// weight has one authority), and records in the ownership TXT that it has seen the hold.
package changes
