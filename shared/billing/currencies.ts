/**
 * The currencies the billing processor accepts: ISO 4217 active currency codes (list one, as
 * amended to 2025) with their minor-unit exponent. Fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN,
 * UYI, UYW), precious metals, XDR, testing codes and withdrawn currencies (ANG, CUC, HRK, SLL, ZWL)
 * are not accepted: nobody is invoiced in them.
 */

const exponent0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const exponent3 = 'BHD IQD JOD KWD LYD OMR TND';
const exponent2 =
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK ' +
  'DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT ' +
  'LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN ' +
  'QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS ' +
  'VED VES WST XCD XCG YER ZAR ZMW ZWG';

const table = new Map<string, number>();
for (const [codes, exponent] of [
  [exponent0, 0],
  [exponent2, 2],
  [exponent3, 3],
] as const) {
  for (const code of codes.split(' ')) table.set(code, exponent);
}

/** Minor-unit exponent of an accepted currency (JPY 0, EUR 2, KWD 3); undefined for anything else. */
export function currencyExponent(code: string): number | undefined {
  return table.get(code);
}

export function acceptedCurrencies(): string[] {
  return [...table.keys()].sort();
}
