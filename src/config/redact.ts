/** A Redis URL (or a comma-separated seed list) fit to print: any user:password part becomes `***`. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/g, '//***@');
}
